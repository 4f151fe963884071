import { parentPort } from 'node:worker_threads';
import { serializeError, type TaskOutcome } from '../../common/worker-pool/worker-error.codec.js';
import { blockingIo } from '../fs/descriptor-io.js';
import { readWorkspaceFile, type ReadWorkspaceFileOptions } from '../fs/workspace-file.reader.js';

export interface ReadRequest {
  id: number;
  root: string;
  path: string;
  options: Omit<ReadWorkspaceFileOptions, 'io'>;
}

export interface ReadResponse {
  id: number;
  outcome: TaskOutcome;
}

// One read at a time, with blocking system calls: a confined read is a dozen short calls, each of which
// would otherwise be a round trip through libuv's thread pool and back to the event loop.
parentPort!.on('message', (request: ReadRequest) => {
  readWorkspaceFile(request.root, request.path, { ...request.options, io: blockingIo }).then(
    (value) => reply({ id: request.id, outcome: { ok: true, value } }),
    (err: unknown) => reply({ id: request.id, outcome: { ok: false, error: serializeError(err) } }),
  );
});

function reply(response: ReadResponse): void {
  parentPort!.postMessage(response);
}
