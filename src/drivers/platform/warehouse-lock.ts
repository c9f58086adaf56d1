// Shared/exclusive locks per ref, in process. The warehouse has no advisory locks (pgvector's
// tool for this), so the store orders its own calls: row work and searches share a ref, DDL
// (create, swap, drop) has it alone. Waiters are served in arrival order and a waiting exclusive
// call stops later shared ones from passing it, so a swap waits for the searches in flight and
// the next ones wait for the swap: each sees one generation whole. Across processes the
// warehouse's atomic SWAP still guarantees whole generations (docs/platform-warehouse.md).

type Mode = "shared" | "exclusive";

class RwLock {
  /** > 0: that many shared holders; -1: one exclusive holder. */
  private active = 0;
  private readonly waiting: { mode: Mode; wake: () => void }[] = [];

  acquire(mode: Mode): Promise<void> {
    if (this.waiting.length === 0 && this.fits(mode)) {
      this.take(mode);
      return Promise.resolve();
    }
    return new Promise((wake) => this.waiting.push({ mode, wake }));
  }

  release(mode: Mode): void {
    this.active = mode === "exclusive" ? 0 : this.active - 1;
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.mode)) {
      const next = this.waiting.shift()!;
      this.take(next.mode);
      next.wake();
    }
  }

  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }

  private fits(mode: Mode): boolean {
    return mode === "exclusive" ? this.active === 0 : this.active >= 0;
  }

  private take(mode: Mode): void {
    this.active = mode === "exclusive" ? -1 : this.active + 1;
  }
}

export class RefLocks {
  private readonly locks = new Map<string, RwLock>();

  async with<T>(ref: string, mode: Mode, fn: () => Promise<T>): Promise<T> {
    let lock = this.locks.get(ref);
    if (!lock) this.locks.set(ref, (lock = new RwLock()));
    await lock.acquire(mode);
    try {
      return await fn();
    } finally {
      lock.release(mode);
      if (lock.idle) this.locks.delete(ref);
    }
  }
}
