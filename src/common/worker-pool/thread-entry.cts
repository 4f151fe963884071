// What each pool thread loads first: a CommonJS module that loads the pool's ES module entry (workerData.entry)
// with import().
//
// Piscina loads a thread's entry with require(), and Node 20.19+ and 24 then load an ES module synchronously.
// A thread terminated inside that synchronous load (the pool closed while a warm thread was still starting)
// aborts the whole process: V8's "IsGraphAsync must be used on an instantiated module". import() is stopped
// cleanly by a terminate. worker-pool.closing.spec.ts closes pools while their threads load, and failed 4 times in
// 5 without this shim.
import { pathToFileURL } from 'node:url';
import { workerData } from 'node:worker_threads';

interface ThreadData {
  entry: string;
}
interface EsmEntry {
  runTask(request: unknown): Promise<unknown>;
}

const loading = import(pathToFileURL((workerData as ThreadData).entry).href) as Promise<EsmEntry>;
// A failed load fails each task with its error; unawaited until the first task, it must not crash the thread.
loading.catch(() => undefined);

export async function runTask(request: unknown): Promise<unknown> {
  return (await loading).runTask(request);
}
