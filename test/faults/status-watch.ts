// sync/status polled all through a cdc run (issue 14): a cdc table must never show `error` while
// its feed heals or its source restarts, and its `last_error` must tell what happened. Polling
// every 100 ms sees every state that lasts longer than that: an `error` is turned on only after
// failures spanning 10 s, and a healed feed's account stays until the next failure or pass.
export type StatusTarget = { url(): string; key(): string; tableId(): string; phase(): string };
export type Sighting = { phase: string; lastError: string | null };

const EVERY_MS = 100;

export class StatusWatch {
  /** Every distinct `last_error` seen, in order, with the sighting's index for `since`. */
  private readonly messages: string[] = [];
  private last: string | null = null;
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly target: StatusTarget, private readonly onError: (s: Sighting) => void) {
    this.done = this.loop();
  }

  /** A point to read messages from: `messagesSince(watch.mark())` is what was said after it. */
  mark(): number {
    return this.messages.length;
  }

  messagesSince(mark: number): string[] {
    return this.messages.slice(mark);
  }

  /** Polls once now (callers that need the latest words before deciding). */
  async poll(): Promise<void> {
    const url = this.target.url(), id = this.target.tableId();
    if (!url || !id) return;
    const phase = this.target.phase();
    const res = await fetch(`${url}/v1/vector-tables/${id}/sync/status`, {
      headers: { authorization: `Bearer ${this.target.key()}` },
      signal: AbortSignal.timeout(10_000),
    }).catch(() => null); // refused while no process runs: the query loop counts those
    if (!res?.ok) return;
    const status = (await res.json().catch(() => null)) as { sync_status?: string; last_error?: string | null } | null;
    if (!status) return;
    const lastError = status.last_error ?? null;
    if (lastError !== null && lastError !== this.last) this.messages.push(lastError);
    this.last = lastError;
    if (status.sync_status === "error") this.onError({ phase, lastError });
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await this.poll();
      await Bun.sleep(EVERY_MS);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}
