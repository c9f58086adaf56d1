// A generation's state: one field, changed only by `to()` along this table.
//
//   from        to          when
//   loading     ready       the load found a checkpoint it can use, or the generation is new
//   loading     rebuilding  no usable checkpoint: searches answer exactly while the index is built
//   rebuilding  ready       every live row is in the index
//   any         closed      the store closed, or the generation was dropped or retired by a swap
//
// A compaction swaps the index of a ready generation and it stays ready. Callers and tests await
// a state (`reached`) rather than poll it.

export type GenerationState = "loading" | "rebuilding" | "ready" | "closed";

const NEXT: Record<GenerationState, readonly GenerationState[]> = {
  loading: ["ready", "rebuilding", "closed"],
  rebuilding: ["ready", "closed"],
  ready: ["closed"],
  closed: [],
};

export class Lifecycle {
  private current: GenerationState = "loading";
  /** Waiting for a state: each resolves when it is reached, or at closed (no state follows). */
  private waiters: { state: GenerationState; resolve: () => void }[] = [];

  /** `name`: the generation, for the error a move off the table throws. */
  constructor(private readonly name: string) {}

  get state(): GenerationState {
    return this.current;
  }

  /** Moves along the table; closing a closed generation is a no-op, any other move off the table a bug. */
  to(next: GenerationState): void {
    if (next === "closed" && this.current === "closed") return;
    if (!NEXT[this.current].includes(next)) throw new Error(`generation ${this.name}: ${this.current} → ${next} is not a transition`);
    this.current = next;
    const woken = this.waiters.filter((w) => w.state === next || next === "closed");
    this.waiters = this.waiters.filter((w) => !woken.includes(w));
    for (const w of woken) w.resolve();
  }

  /** Resolves once the generation is in `state` (at once if it is), or closed. */
  reached(state: GenerationState): Promise<void> {
    if (this.current === state || this.current === "closed") return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ state, resolve }));
  }
}
