import { ErrorCodec } from '../../common/worker-pool/worker-error.codec.js';
import { workspaceFsErrorCodec } from '../fs/workspace-fs.error.js';

// A read fails with a WorkspaceFsError or an AppError; both sides of the read threads use this codec.
export const readThreadErrors = new ErrorCodec([workspaceFsErrorCodec]);
