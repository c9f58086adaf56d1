// The core of every sync path: given the source's `(key, text_hash, meta_hash)` for some rows,
// bring the target generation in line with them, embedding only what must be embedded:
//  - hashes equal to the stored ones: nothing;
//  - text hash equal, metadata hash not: metadata update, no embedding call;
//  - text hash equal in the reference generation (a re-backfill): the vector is copied;
//  - otherwise the row is fetched and rendered; if its text equals the stored text (a hash that
//    moved without the text moving) the vector is reused, else it is embedded.
// Split in two so callers can pipeline: `prepareRows` reads and embeds, `commit` writes.
// With a warehouse built-in model the text is neither fetched nor compared here: every row whose
// text hash moved goes to the warehouse, which embeds and writes it during `prepareRows`
// (embedder.ts); a row that turns out blank still counts against the budget cut (erring low).
import { keyText, type RowHash, type SourceRow } from "../../drivers/sources/types.ts";
import type { MetadataUpdate, RowHashes, UpsertRow } from "../../drivers/store-api/index.ts";
import { renderMetadata, renderText, storedTextHash } from "../vector-tables/render.ts";
import { emptyRowsAmong, recordEmptyRows, type FailedRow } from "./empty-rows.ts";
import { embedRows } from "./embedder.ts";
import type { SyncJob } from "./job.ts";
import { rowTextLimit, textRefusal } from "./row-errors.ts";

export type ApplyTarget = {
  /** The generation written: the live one, or a building one during a re-backfill. */
  generation: number;
  /** The generation compared and copied from (the live one). Equal to `generation` outside a re-backfill. */
  reference: number;
  /** Vectors the organization may still add (docs/vector-tables.md#vector-budget); null when the write only replaces rows. */
  budget: { remaining: number } | null;
  /** Searchable at once, graph insertion in background steps that hold back a writer ahead of them (vector-store later.ts): the change stream and fills. */
  indexLater?: boolean;
  /** The change stream's writes: held back only by a far larger backlog of the graph (vector-store later.ts STREAM_BACKLOG). */
  streaming?: boolean;
};

export type ApplyCounts = { embedded: number; reused: number; metadata: number; deleted: number; empty: number; unchanged: number };

export type Prepared = {
  counts: ApplyCounts;
  /** Rows left out because the budget ran out (the caller stops after committing the rest). */
  overBudget: number;
  /**
   * How many leading rows of the given hashes the commit fully handles: all of them, unless the
   * budget ran out, then those before the first row it could not store (the rest is left
   * untouched, so a fill's checkpoint there resumes exactly at that row).
   */
  handled: number;
  /**
   * Writes the changes. `rowsPerWrite`: new vectors go to the store in writes of at most that many
   * rows, the event loop turning between them (`writeRows`). Safe where a crash between two
   * writes replays the rows: a fill's page is checkpointed only after its commit, a change
   * stream's position only after its batch, and a pass finds what it did not write changed again;
   * the replay finds the rows already stored and embeds none of them again.
   */
  commit(rowsPerWrite?: number): Promise<void>;
};

/**
 * Rows per store write. A page's 256 rows written at once held the event loop ~25 ms (libSQL's
 * batch is synchronous: the statements, then the commit's fsync, ~8 ms at 256 dimensions), and a
 * query answered during a backfill waited behind it; a hash pass's 512 changed rows at 100k rows,
 * ~90 ms. In writes of 64 with a turn between them, a query's p99 during a 50k-row backfill at 256
 * dimensions went from 66-72 ms (four runs) to 43-52 ms (three), at the same backfill rate within
 * the runs' spread.
 */
export const WRITE_ROWS = 64;

/**
 * `commit`'s rows per write for this job's store: WRITE_ROWS for managed storage; one write for a
 * platform store, whose write is a statement to the customer's database, where the loop is not
 * held and every extra statement costs a round trip (a warehouse's, ~100 ms).
 */
export const writeRows = (job: Pick<SyncJob, "store">): number | undefined => (job.store.mode === "managed" ? WRITE_ROWS : undefined);

export const zeroCounts = (): ApplyCounts => ({ embedded: 0, reused: 0, metadata: 0, deleted: 0, empty: 0, unchanged: 0 });

/**
 * What a hash pass or a fill has done so far: its counts and the source rows it read. Filled in
 * as it goes (the caller may hand one in), so a run that fails still tells what it did (sync/history.ts).
 */
export type Applied = { counts: ApplyCounts; rows: number };

export const nothingApplied = (): Applied => ({ counts: zeroCounts(), rows: 0 });

export function addCounts(into: ApplyCounts, more: ApplyCounts): ApplyCounts {
  for (const k of Object.keys(into) as (keyof ApplyCounts)[]) into[k] += more[k];
  return into;
}

const tagOf = (textHash: string) => textHash.slice(textHash.indexOf(".") + 1);

const byPk = (rows: RowHashes[]) => new Map(rows.map((r) => [r.pk, r]));

async function storedHashes(job: SyncJob, target: ApplyTarget, pks: string[]) {
  const { store } = job;
  const current = byPk(await store.hashes({ pks, generation: target.generation }));
  const reference = target.reference === target.generation ? current : byPk(await store.hashes({ pks, generation: target.reference }));
  const empties = await emptyRowsAmong(job.services.database.db, job.table.id, target.generation, pks);
  return { current, reference, empties };
}

/** The source hashes that differ from what the target stores (or records as empty text). */
function splitChanged(job: SyncJob, hashes: RowHash[], current: Map<string, RowHashes>, empties: Map<string, string>): { changed: RowHash[]; unchanged: number } {
  const changed: RowHash[] = [];
  for (const h of hashes) {
    const pk = keyText(h.key);
    const text = storedTextHash(h.textHash, job.tag);
    const now = current.get(pk);
    const same = now ? now.textHash === text && now.metaHash === h.metaHash : empties.get(pk) === text;
    if (!same) changed.push(h);
  }
  return { changed, unchanged: hashes.length - changed.length };
}

/** `splitChanged` against the target's stored hashes: lets a pass gather changes over many pages. */
export async function changedRows(job: SyncJob, hashes: RowHash[], target: ApplyTarget): Promise<{ changed: RowHash[]; unchanged: number }> {
  const pks = hashes.map((h) => keyText(h.key));
  const stored = await job.store.hashes({ pks, generation: target.generation });
  return splitChanged(job, hashes, byPk(stored), await emptyRowsAmong(job.services.database.db, job.table.id, target.generation, pks));
}

/** Reads, renders and embeds what the given source hashes call for; writes nothing yet. */
export async function prepareRows(job: SyncJob, hashes: RowHash[], target: ApplyTarget, opts: { signal?: AbortSignal } = {}): Promise<Prepared> {
  const counts = zeroCounts();
  const { current, reference, empties } = await storedHashes(job, target, hashes.map((h) => keyText(h.key)));
  const want = new Map(hashes.map((h) => [keyText(h.key), { text: storedTextHash(h.textHash, job.tag), meta: h.metaHash }]));
  const { changed: toFetch, unchanged } = splitChanged(job, hashes, current, empties);
  counts.unchanged = unchanged;
  // A text over the row cap is not even sent by a source that can hold it back (row-errors.ts).
  const textLimit = job.embedder.kind === "provider" ? rowTextLimit(job.textColumns) : undefined;
  const fetched = await job.source.fetchByKeys({ table: job.table.sourceTable, pk: [job.table.primaryKeyColumn], columns: job.columns, keys: toFetch.map((h) => h.key), textLimit });
  const rows = new Map<string, SourceRow>(fetched.map((r) => [keyText(r.key), r]));

  let deletes: string[] = [];
  let metaUpdates: MetadataUpdate[] = [];
  let emptied: { pk: string; textHash: string }[] = [];
  let failed: FailedRow[] = [];
  const readAt = job.services.clock.now().toISOString();
  const upserts: UpsertRow[] = [];
  const toEmbed: UpsertRow[] = [];
  const maybeReuse: UpsertRow[] = [];
  for (const h of toFetch) {
    const pk = keyText(h.key);
    const row = rows.get(pk);
    const w = want.get(pk)!;
    if (!row) {
      // Deleted between the hash read and the fetch: the next read will not list it.
      if (current.has(pk)) deletes.push(pk);
      continue;
    }
    const metadata = renderMetadata(job.table.columns, row.values);
    const now = current.get(pk);
    // Equal text hashes mean equal text. (A row stored by an older version from its change stream
    // has the text hash `unhashed.<tag>`: never equal, so it is compared by its rendered text
    // below, the vector reused for the same text, and stored with its real hashes from then on.)
    if (now && now.textHash === w.text) {
      metaUpdates.push({ pk, metaHash: w.meta, metadata });
      continue;
    }
    if (job.embedder.kind === "platform") {
      // The warehouse renders the text (embedder.ts): nothing to compare or reuse here.
      toEmbed.push({ pk, textHash: w.text, metaHash: w.meta, text: "", metadata, vector: new Float32Array(0) });
      continue;
    }
    const text = renderText(job.table.columns, row.values);
    // Before any tokenizer work: a row whose text is over the cap fails alone (row-errors.ts).
    const refusal = textRefusal(row, text);
    if (refusal !== null) {
      failed.push({ pk, textHash: w.text, error: refusal, at: readAt });
      if (now) deletes.push(pk); // its stored vector is of a text the source no longer has
      continue;
    }
    if (text === null) {
      emptied.push({ pk, textHash: w.text });
      if (now) deletes.push(pk);
      continue;
    }
    const upsert: UpsertRow = { pk, textHash: w.text, metaHash: w.meta, text, metadata, vector: new Float32Array(0) };
    if (reference.has(pk)) maybeReuse.push(upsert);
    else toEmbed.push(upsert);
  }

  // Vectors already stored for the same text (copied in a re-backfill, or a hash that moved alone).
  const docs = await job.store.docs(maybeReuse.map((r) => r.pk), { generation: target.reference });
  for (const row of maybeReuse) {
    const doc = docs.get(row.pk);
    const stored = reference.get(row.pk)!;
    if (doc && doc.text === row.text && doc.vector.length === job.table.embeddingDimensions && tagOf(stored.textHash) === job.tag) {
      upserts.push({ ...row, vector: doc.vector });
      counts.reused++;
    } else toEmbed.push(row);
  }

  // Over the budget: every row from the first one it cannot store on is left for later, in the
  // order given (primary-key order for a page), so what is stored is a prefix of the rows.
  let embedding = toEmbed;
  const { handled, overBudget } = budgetCut(hashes, toEmbed, current, target.budget);
  if (handled < hashes.length) {
    const left = new Set(hashes.slice(handled).map((h) => keyText(h.key)));
    const kept = <T extends { pk: string }>(rows: T[]) => rows.filter((r) => !left.has(r.pk));
    embedding = kept(toEmbed);
    upserts.splice(0, upserts.length, ...kept(upserts));
    metaUpdates = kept(metaUpdates);
    deletes = deletes.filter((pk) => !left.has(pk));
    emptied = kept(emptied);
    failed = kept(failed);
  }
  const at = { generation: target.generation, indexLater: target.indexLater, streaming: target.streaming };
  const embedded = await embedRows(job, embedding, new Set(current.keys()), at, opts.signal);
  upserts.push(...embedded.upserts);
  emptied.push(...embedded.emptied);
  counts.embedded += embedded.embedded;
  // Rows recorded as empty that were re-read and no longer are (they have text now, or are gone).
  const reread = new Set(toFetch.map((h) => keyText(h.key)));
  const leftOut = new Set([...hashes.slice(handled).map((h) => keyText(h.key)), ...emptied.map((r) => r.pk), ...failed.map((r) => r.pk)]);
  const cleared = [...empties.keys()].filter((pk) => reread.has(pk) && !leftOut.has(pk));
  counts.metadata = metaUpdates.length;
  counts.deleted = deletes.length + embedded.deleted;
  counts.empty = emptied.length;

  const { store } = job;
  return {
    counts,
    overBudget,
    handled,
    async commit(rowsPerWrite = Infinity) {
      let from = 0;
      do {
        if (from > 0) await job.services.foreground.turn();
        await store.upsert(upserts.slice(from, from + rowsPerWrite), at);
        from += rowsPerWrite;
      } while (from < upserts.length);
      await store.updateMetadata(metaUpdates, at);
      await store.delete(deletes, at);
      // After the vectors: a crash between the two leaves a row uncounted until the next pass
      // re-reads it, never counted twice.
      if (emptied.length + failed.length + cleared.length > 0) await recordEmptyRows(job.services.database.db, job.table.id, target.generation, { emptied, failed, cleared });
    },
  };
}

/**
 * Where the budget cuts the given rows: `handled` leading rows fit (each new vector among them
 * takes one from `budget.remaining`), `overBudget` new vectors at or after the cut do not.
 * Rows that replace a stored vector take nothing.
 */
function budgetCut(hashes: RowHash[], toEmbed: UpsertRow[], current: Map<string, RowHashes>, budget: ApplyTarget["budget"]): { handled: number; overBudget: number } {
  if (!budget) return { handled: hashes.length, overBudget: 0 };
  const fresh = new Set(toEmbed.filter((r) => !current.has(r.pk)).map((r) => r.pk));
  let handled = hashes.length;
  let taken = 0;
  for (let i = 0; i < hashes.length; i++) {
    if (!fresh.has(keyText(hashes[i]!.key))) continue;
    if (taken === budget.remaining) {
      handled = i;
      break;
    }
    taken++;
  }
  budget.remaining -= taken;
  return { handled, overBudget: fresh.size - taken };
}
