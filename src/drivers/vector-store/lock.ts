// A FIFO async mutex: writes, loads, refreshes and checkpoints of one generation run one at a
// time, so in-memory state is applied in change-sequence order.
export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn, fn);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
