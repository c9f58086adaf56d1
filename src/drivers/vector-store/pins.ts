// The searches holding a generation (store.ts `pin`): a drop or a retire waits until none does.

export class Pins {
  private held = 0;
  private waiting: (() => void)[] = [];

  hold(): void {
    this.held++;
  }

  release(): void {
    if (--this.held > 0 || this.waiting.length === 0) return;
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }

  /** Resolves once no search holds the generation. Every caller is woken (a drop may wait beside a retire). */
  drained(): Promise<void> {
    if (this.held === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}
