// Why this exists: a large write batch runs on the database's write thread (db/fast-writes.ts), which
// keeps a fill's 64-row batches off the event loop, so queries during a fill wait less. The thread
// adds a hand-off there and back, with the write gate held, to each batch it takes. A change
// stream's batch is what commit → queryable waits on, and its embedded changes reach the thread's
// size too, so the stream's writes say so and stay on the loop (docs/performance.md, "Write
// batches on a thread").
import { AsyncLocalStorage } from "node:async_hooks";

const onLoop = new AsyncLocalStorage<true>();

/** Runs `fn` with every write batch it makes kept on the event loop, whatever its size. */
export const writesOnLoop = <T>(fn: () => Promise<T>): Promise<T> => onLoop.run(true, fn);

/** Whether the write batch being made asked to stay on the event loop. */
export const keptOnLoop = (): boolean => onLoop.getStore() === true;
