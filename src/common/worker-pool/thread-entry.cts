// What each pool thread loads first: a CommonJS module that loads the pool's ES module entry
// (workerData.entry) with import().
//
// Piscina loads a thread's entry with require(), and Node 20.19+ and 24 then load an ES module
// synchronously. A thread terminated inside that synchronous load (the pool closed while a warm thread was
// still starting) aborts the whole process: V8's "IsGraphAsync must be used on an instantiated module".
// import() is stopped cleanly by a terminate. worker-pool.thread-entry.spec.ts closes pools while their
// threads load, and failed 4 times in 5 without this shim.
//
// `runTask` is exported as the promise of the entry's own, which piscina awaits before it reports the
// thread ready. A thread reported ready first waits for tasks in Atomics.wait, where the import stands
// still, and its first task waits for the whole load (423-472 ms here, 700-840 ms under load).
import { pathToFileURL } from 'node:url';
import { workerData } from 'node:worker_threads';

interface ThreadData {
  entry: string;
}
interface EsmEntry {
  runTask(request: unknown): Promise<unknown>;
}

export const runTask: Promise<EsmEntry['runTask']> = (
  import(pathToFileURL((workerData as ThreadData).entry).href) as Promise<EsmEntry>
).then((entry) => entry.runTask);
