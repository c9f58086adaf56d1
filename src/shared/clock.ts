/** Time comes from here so tests can move it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests set and advance by hand. */
export class FakeClock implements Clock {
  #ms: number;
  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.#ms = typeof start === "number" ? start : start.getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
}

export const iso = (d: Date): string => d.toISOString();
