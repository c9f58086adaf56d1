// The sync history's one seam (docs/vector-tables.md#sync-history). Every pass the engine runs —
// a fill task run, a batch pass, a reconciling pass, a minute of a change stream — is opened with
// `startPass` and ended with `finishPass`, ok or failed, and nowhere else: whatever wants to know
// that a pass ended (its history entry, a metrics counter) hooks `finishPass` and sees them all.
// The counts are the engine's own (apply.ts ApplyCounts); tokens are what the pass's provider
// billed (drivers/embeddings/stats.ts), so the entry says what the pass cost.
import type { Services } from "../../services.ts";
import { newId } from "../../shared/ids.ts";
import type { VectorTableRow } from "../vector-tables/tables.ts";
import type { ApplyCounts } from "./apply.ts";
import type { Embedder } from "./embedder.ts";
import { failRunningPasses, insertPass, prunePasses, updatePass } from "./repo.ts";
import type { PassKind } from "./tables.ts";

/** Entries kept per vector table; older ones are deleted as new ones come (CONTRACT 10). */
export const HISTORY_KEEP = 1000;

export type PassTotals = { scanned: number; embedded: number; metadataOnly: number; deleted: number; unchanged: number; tokens: number };

export const zeroTotals = (): PassTotals => ({ scanned: 0, embedded: 0, metadataOnly: 0, deleted: 0, unchanged: 0, tokens: 0 });

/** A pass under way: its entry's id, and what it has counted so far (the caller adds to `totals`). */
export type Pass = { id: string; vectorTableId: string; orgId: string; kind: PassKind; startedAt: string; totals: PassTotals };

export type PassOutcome = { ok: true } | { ok: false; error: unknown };

/**
 * Adds what a sync step did. A row written without an embedding call — its metadata changed, or
 * its vector was reused for an unchanged text (copied by a re-backfill) — is `rows_metadata_only`.
 * Rows whose text renders empty are in no column but `rows_scanned`. `unchanged: false` leaves
 * out the unchanged rows of a closing hash pass that re-reads rows the fill already counted.
 */
export function addApplied(totals: PassTotals, counts: ApplyCounts, opts: { unchanged?: boolean } = {}): PassTotals {
  totals.embedded += counts.embedded;
  totals.metadataOnly += counts.metadata + counts.reused;
  totals.deleted += counts.deleted;
  if (opts.unchanged !== false) totals.unchanged += counts.unchanged;
  return totals;
}

/**
 * The tokens a job's provider has billed so far: each job opens its own driver, whose counters
 * start at 0. A warehouse built-in model embeds in SQL and bills the warehouse: 0 here.
 */
export const embedderTokens = (embedder: Embedder): number => (embedder.kind === "provider" ? embedder.provider.stats.tokens : 0);

/**
 * Passes of one family never run at once on a table (one fill task per table; one batch or
 * reconciling pass, sync/state.ts `passes`), so an entry of the family still `running` when a new
 * one starts was left by a process that died or stopped mid-pass: it is closed as failed.
 */
const FAMILY: Record<PassKind, readonly PassKind[]> = {
  backfill: ["backfill", "rebackfill"],
  rebackfill: ["backfill", "rebackfill"],
  batch: ["batch", "reconcile"],
  reconcile: ["batch", "reconcile"],
  cdc: [],
};

/** Opens the pass's entry (`running`) and prunes the table's history to HISTORY_KEEP, in one transaction. */
export async function startPass(services: Services, table: Pick<VectorTableRow, "id" | "orgId">, kind: PassKind, opts: { startedAt?: string } = {}): Promise<Pass> {
  const db = services.database.db;
  const now = services.clock.now().toISOString();
  const pass: Pass = { id: newId(), vectorTableId: table.id, orgId: table.orgId, kind, startedAt: opts.startedAt ?? now, totals: zeroTotals() };
  const stale = `interrupted: the process running this pass stopped before it finished; pass ${pass.id} started after it`;
  await db.transaction(async (tx) => {
    if (FAMILY[kind].length > 0) await failRunningPasses(tx, table.id, FAMILY[kind], stale, now);
    await insertPass(tx, {
      id: pass.id,
      vectorTableId: table.id,
      orgId: table.orgId,
      kind,
      status: "running",
      startedAt: pass.startedAt,
      finishedAt: null,
      rowsScanned: 0,
      rowsEmbedded: 0,
      rowsMetadataOnly: 0,
      rowsDeleted: 0,
      rowsUnchanged: 0,
      tokens: 0,
      error: null,
    });
    await prunePasses(tx, table.id, HISTORY_KEEP);
  });
  return pass;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * Ends a pass: its entry gets its status, counts and error. The single place a pass ends. Never
 * throws: the pass's own outcome (or its error) is what the caller goes on with, and a history
 * write that fails (a full disk) is logged rather than turning a completed pass into a failed one.
 */
export async function finishPass(services: Services, pass: Pass, outcome: PassOutcome): Promise<void> {
  const t = pass.totals;
  // The one place a pass ends, so the counter and the history can never disagree (docs/operability.md).
  services.metrics.syncPass(pass.vectorTableId, pass.kind, outcome.ok ? "ok" : "error");
  try {
    await updatePass(services.database.db, pass.id, {
      kind: pass.kind,
      status: outcome.ok ? "completed" : "failed",
      finishedAt: services.clock.now().toISOString(),
      rowsScanned: t.scanned,
      rowsEmbedded: t.embedded,
      rowsMetadataOnly: t.metadataOnly,
      rowsDeleted: t.deleted,
      rowsUnchanged: t.unchanged,
      tokens: t.tokens,
      error: outcome.ok ? null : messageOf(outcome.error),
    });
  } catch (err) {
    services.logger.warn({ err, vector_table_id: pass.vectorTableId, pass_id: pass.id }, "could not record the end of a sync pass");
  }
}
