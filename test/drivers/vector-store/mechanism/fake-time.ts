// Fake time for the store's background work (pace.ts StoreClock): a test moves the clock and the
// timers and sleeps that come due run, in order, instead of the test waiting in real time.
import { defaultPacing, Pacer, type StoreClock } from "../../../../src/drivers/vector-store/pace.ts";

export class FakeStoreClock implements StoreClock {
  private ms = 0;
  private made = 0;
  private timers: { at: number; order: number; fn: () => void }[] = [];

  now(): number {
    return this.ms;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.setTimer(resolve, ms));
  }

  setTimer(fn: () => void, ms: number): () => void {
    const timer = { at: this.ms + Math.max(0, ms), order: this.made++, fn };
    this.timers.push(timer);
    return () => void (this.timers = this.timers.filter((t) => t !== timer));
  }

  /** Timers set and not yet run or cancelled. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time on by `ms`: each timer due by then runs at its time, with a turn of the loop after it for what it started. */
  async advance(ms: number): Promise<void> {
    const end = this.ms + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.ms = Math.max(this.ms, due.at);
      due.fn();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.ms = end;
  }
}

/** A Pacer on `clock` (fake unless given), with a foreground of its own. */
export function pacerOn(clock: StoreClock = new FakeStoreClock()): Pacer {
  return new Pacer({ ...defaultPacing(), clock });
}
