import { parentPort } from 'node:worker_threads';
import type { TaskOutcome } from '../../common/worker-pool/worker-error.codec.js';
import { blockingIo } from '../fs/descriptor-io.js';
import { readWorkspaceFile, type ReadWorkspaceFileOptions } from '../fs/workspace-file.reader.js';
import { readThreadErrors } from './read-thread.errors.js';

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

// Reads come in batches (all the reads the event loop gathered in one turn) and are made one after the
// other with blocking system calls: a confined read is a dozen short calls, each of which would otherwise
// be a round trip through libuv's thread pool. The answers go back as one batch too.
parentPort!.on('message', (batch: ReadRequest[]) => {
  void Promise.all(batch.map(read)).then((responses) => parentPort!.postMessage(responses));
});

async function read(request: ReadRequest): Promise<ReadResponse> {
  const outcome = await readThreadErrors.settle(() =>
    readWorkspaceFile(request.root, request.path, { ...request.options, io: blockingIo }),
  );
  return { id: request.id, outcome };
}
