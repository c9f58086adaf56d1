// A change stream's sync history (docs/vector-tables.md#sync-history): one `cdc` entry per
// wall-clock minute (the service clock's) in which the stream applied changes or failed to,
// written once the minute is over — or at shutdown, or when the consumer stops — never per change:
// a busy stream applies many batches a second, and its history must not cost a write each.
import type { Services } from "../../services.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import type { Applied } from "./apply.ts";
import { addApplied, finishPass, startPass, zeroTotals, type PassTotals } from "./history.ts";

const MINUTE_MS = 60_000;

/**
 * One minute's activity: when its first batch was recorded (the entry's `started_at`, so entries
 * sort among the table's other passes by when their work began), what was applied, and the last
 * failure to apply, if any.
 */
type Minute = { minute: number; startedAt: string; totals: PassTotals; failures: number; lastError: string | null };

export class StreamHistory {
  #current: Minute | null = null;
  #due: Minute[] = [];
  /** Writes in order, one after the other: a minute is never written twice nor lost between two flushes. */
  #writing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(
    private readonly services: Services,
    private readonly table: Pick<VectorTableRow, "id" | "orgId">,
  ) {}

  #minuteNow(): number {
    return Math.floor(this.services.clock.now().getTime() / MINUTE_MS);
  }

  /** This minute's tally; a minute that is over waits in `#due` for the next flush. */
  #minute(): Minute {
    const at = this.services.clock.now();
    const now = Math.floor(at.getTime() / MINUTE_MS);
    if (this.#current && this.#current.minute !== now) this.#due.push(this.#current), (this.#current = null);
    return (this.#current ??= { minute: now, startedAt: at.toISOString(), totals: zeroTotals(), failures: 0, lastError: null });
  }

  /** A batch applied (its keys read, or a whole hash pass), and the tokens it cost. */
  applied(applied: Applied, tokens: number): void {
    if (this.#closed) return;
    const m = this.#minute();
    m.totals.scanned += applied.rows;
    addApplied(m.totals, applied.counts);
    m.totals.tokens += tokens;
  }

  /** A batch that failed to apply (it is retried): the minute's entry is `failed` with the last such error. */
  failed(err: unknown, tokens: number): void {
    if (this.#closed) return;
    const m = this.#minute();
    m.failures++;
    m.lastError = err instanceof Error ? err.message : String(err);
    m.totals.tokens += tokens;
  }

  /** Writes the minutes that are over; every minute, this one included, when `all`. */
  flush(all = false): Promise<void> {
    if (this.#current && (all || this.#current.minute !== this.#minuteNow())) this.#due.push(this.#current), (this.#current = null);
    const due = this.#due.splice(0);
    if (due.length > 0) this.#writing = this.#writing.then(() => this.#write(due));
    return this.#writing;
  }

  /** The last flush: whatever is recorded after it (the stream winding down at shutdown) is dropped. */
  async close(): Promise<void> {
    const done = this.flush(true);
    this.#closed = true;
    await done;
  }

  async #write(minutes: Minute[]): Promise<void> {
    for (const m of minutes) {
      try {
        const pass = await startPass(this.services, this.table, "cdc", { startedAt: m.startedAt });
        pass.totals = m.totals;
        await finishPass(this.services, pass, m.failures > 0 ? { ok: false, error: m.lastError } : { ok: true });
      } catch (err) {
        this.services.logger.warn({ err, vector_table_id: this.table.id }, "could not record a minute of the change stream in the sync history");
      }
    }
  }
}
