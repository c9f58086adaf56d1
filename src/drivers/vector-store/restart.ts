// A generation's start-up, and the checkpoint cadence that bounds it. Kept apart from the live
// generation (generation.ts) because it is the part with a safety argument of its own: what is
// served after kill -9 must equal libSQL. Start-up loads the checkpoint (if every check passes,
// checkpoint.ts), reads the mirror from libSQL, adds every live row version the index lacks (the
// restart invariant, coverLiveRows), then samples self-searches (strays.ts). Any doubt → the
// generation rebuilds its index in the background while searches are answered exactly.
import type { Client } from "@libsql/client";
import { loadCheckpoint, strayListFits } from "./checkpoint.ts";
import { addCurrentVersions } from "./adds.ts";
import type { HnswIndex } from "./hnsw.ts";
import type { Mirror } from "./mirror.ts";
import { countRows, readRowPage, readSeq } from "./reads.ts";
import { readCheckpointRecord } from "./registry.ts";
import type { GenerationRef } from "./rows.ts";
import { selfCheck } from "./strays.ts";
import type { IndexParams } from "./types.ts";

export const LOAD_PAGE_ROWS = 4096;
/** Rows added to an index per step of a replay; the event loop gets a turn between steps. */
const REPLAY_STEP_ROWS = 1024;

/**
 * An index checkpoint follows every max(CHECKPOINT_ROWS, keys / CHECKPOINT_SHARE) rows written
 * (upserted or deleted), and any write CHECKPOINT_MS after the last one, so a restart after
 * kill -9 replays at most that many rows + one write batch − 1, and the rows written while the
 * last checkpoint's file was made durable (writes wait for its save, and for the rest only past
 * a quarter of the interval: rowsBesideCheckpoint): 8,192 + a batch up to 131k keys, 1/16 of the index
 * beyond (so saves stay a small share of write time: a save writes the whole index, ~0.4 KB a
 * row at 256 dims i8). Measured (`bun run bench restart`, 256 dims, 2 cores shared with other
 * work, load 3-5): 107k rows killed 8,000 rows past a checkpoint → servable through HNSW in
 * 8.8 s (index file checked and loaded 0.15 s, rows read 1.3 s, 8,000 rows replayed 7.1 s);
 * with no checkpoint, the same 107k rows rebuild in 71 s (100k: 37-47 s). Uncontended usearch
 * adds ~0.3 ms a row at this size, so the bound replays in ~2.5 s.
 */
export const CHECKPOINT_ROWS = 8_192;
const CHECKPOINT_SHARE = 16;
const CHECKPOINT_MS = 5 * 60_000;

/**
 * Rows that may be written while a checkpoint's file is made durable (checkpoints.ts
 * withinReplayBound): a quarter of the interval, so a kill replays at most 1.25 of it.
 */
export function rowsBesideCheckpoint(keys: number): number {
  return Math.max(CHECKPOINT_ROWS, keys / CHECKPOINT_SHARE) / 4;
}

/** After `written` rows on an index of `keys` keys, `sinceMs` after the last checkpoint: is one due? */
export function checkpointDue(written: number, keys: number, sinceMs: number): boolean {
  return written >= Math.max(CHECKPOINT_ROWS, keys / CHECKPOINT_SHARE) || (written > 0 && sinceMs >= CHECKPOINT_MS);
}

/** What a restart found; the generation applies it under its lock, then catches up from `seq`. */
export interface Restored {
  /** libSQL's change sequence read before the rows: the mirror holds at least every change up to it. */
  seq: number;
  /**
   * The checkpoint's index (topped up with every live row when `problem` is null), the sequence it
   * covers, and whether its strays were all known when saved (saved-strays.ts `SavedStrays.whole`).
   */
  checkpoint: { index: HnswIndex; seq: number; straysChecked: boolean; sweepMs: number } | null;
  /** Why the index must be rebuilt; null when it serves as it is. */
  problem: string | null;
  /** Live rows the checkpoint lacked, added now (not yet checked for strays). */
  replayed: number[];
  timing: { checkpointMs?: number; rowsMs?: number; replayMs?: number };
}

/** Where a generation's checkpoints live and the index parameters they must have been made with. */
export interface CheckpointPlace {
  indexDir: string;
  params: IndexParams;
  /** For the load's timing in its log line. */
  now: () => number;
}

/** Reads a generation back into `mirror` (empty) and checks and tops up its checkpoint. Run under the generation's lock. */
export async function restore(client: Client, ref: GenerationRef, mirror: Mirror, place: CheckpointPlace): Promise<Restored> {
  const seq = await readSeq(client, ref);
  const recorded = await readCheckpointRecord(client, ref.collection, ref.generation);
  const t0 = place.now();
  const checkpoint = loadCheckpoint(place.indexDir, ref.collection, ref.generation, ref.spec.dimensions, place.params, recorded);
  const tCheckpoint = place.now();
  await readMirror(client, ref, mirror, checkpoint.ok ? checkpoint.index : undefined);
  const t1 = place.now();
  if (!checkpoint.ok) return { seq, checkpoint: null, problem: checkpoint.problem, replayed: [], timing: {} };
  const { meta } = checkpoint;
  const loaded = { index: checkpoint.index, seq: meta.seq, straysChecked: strayListFits(meta, mirror.liveCount, place.params.expansionSearch), sweepMs: meta.strays.sweepMs };
  if (loaded.seq > seq) return { seq, checkpoint: loaded, problem: `checkpoint at seq ${loaded.seq} is ahead of libSQL (${seq})`, replayed: [], timing: {} };
  const replayed = await coverLiveRows(loaded.index, mirror);
  const problem = selfCheck(loaded.index, mirror);
  const timing = { checkpointMs: Math.round(tCheckpoint - t0), rowsMs: Math.round(t1 - tCheckpoint), replayMs: Math.round(place.now() - t1) };
  return { seq, checkpoint: loaded, problem, replayed, timing };
}

/**
 * Every live row of the generation into `mirror`, a page at a time, with a turn of the event loop
 * after each page. A local libSQL read resolves without a turn, so without it the whole read ran
 * as one: a process reopening 600k × 384 rows ran no timer and answered no request for the 8 s
 * until the table was ready (the read alone took 34 s at 2M rows). Now the loop waits at most the
 * checkpoint's load (~0.9 s there, one native call), then a page (70-100 ms). Measured with
 * scripts/bench/lib/query-restart.ts; peaks and page sizes tried in docs/architecture.md#stores.
 *
 * Every COLLECT_BYTES of f32 vectors read, a full garbage collection: each row comes as objects
 * and a blob of its own, and the mirror's slabs grow by copying; left to the collector's pace
 * that garbage set the start-up's peak (600k × 384: 1.15-1.20 GB against 1.01-1.03, ~0.4 s of
 * ~6 s ready), and a peak past the machine's memory is a restart that never ends.
 *
 * `lendFrom`: the checkpoint's index. A compact mirror then reads the codes of the rows it holds
 * from it from the first page on (mirror.ts lend), instead of filling its code slabs only to hand
 * them over once loaded: at 1M × 768 those were 0.77 GB of the start-up's peak.
 */
export async function readMirror(client: Client, ref: GenerationRef, mirror: Mirror, lendFrom?: HnswIndex): Promise<void> {
  mirror.expectRows(await countRows(client, ref));
  if (lendFrom) mirror.lend(lendFrom);
  let sinceCollect = 0;
  for (let after = 0; ; ) {
    const page = await readRowPage(client, ref, after, LOAD_PAGE_ROWS);
    if (page.length === 0) return;
    for (const row of page) mirror.set(row.rid, row.vector, row.metadata, row.pk, row.text, row.vecSeq);
    mirror.settleCodes();
    after = page[page.length - 1]!.rid;
    sinceCollect += page.length * mirror.dims * 4;
    if (sinceCollect >= COLLECT_BYTES) {
      sinceCollect = 0;
      Bun.gc(true);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** 8 pages of 384-dimension rows; measured every 4, 8, 16 and 32 (docs/architecture.md#stores). */
const COLLECT_BYTES = 48 << 20;

/** Live rows whose current version `index` lacks (ascending rids). */
export function missingRows(index: HnswIndex, mirror: Mirror): number[] {
  const rids = mirror.liveRids();
  const missing: number[] = [];
  for (let i = 0; i < rids.length; i += LOAD_PAGE_ROWS) {
    const step = rids.subarray(i, i + LOAD_PAGE_ROWS);
    const present = index.has(step, Array.from(step, (rid) => mirror.versionOf(rid)));
    present.forEach((p, j) => p || missing.push(step[j]!));
  }
  return missing;
}

/**
 * The restart invariant: every live row's current version is in the index (count and change
 * sequence are what the keys encode). Adds every one that is missing — the rows written after
 * the checkpoint, and anything a checkpoint should have had and did not; every other key in
 * the index is dead (deleted or replaced rows) and never returned. Returns the rows added.
 */
async function coverLiveRows(index: HnswIndex, mirror: Mirror): Promise<number[]> {
  const missing = missingRows(index, mirror);
  // In steps, the event loop served between them (searches take the SQL path while loading).
  for (let i = 0; i < missing.length; i += REPLAY_STEP_ROWS) {
    addCurrentVersions(index, mirror, missing.slice(i, i + REPLAY_STEP_ROWS));
    await new Promise((resolve) => setImmediate(resolve));
  }
  index.dead = index.size - mirror.liveCount;
  return missing;
}

/**
 * A load whose checkpoint listed every stray checks the rows added since inline, up to this many
 * (~0.1-0.3 ms a row); past it, a sweep of every row in the background is cheaper to wait for.
 */
export const LOAD_CHECKED_ROWS = 16_384;

/**
 * Live rows a checkpoint at `seq` did not hold as they are now: written after it (their vector's
 * sequence is later; the catch-up's writes, applied while loading, are not checked as they apply),
 * or added to the index at the load (`replayed`: a row written before it but not yet in the graph).
 */
export function uncheckedSince(mirror: Mirror, seq: number, replayed: number[]): number[] {
  const out = new Set(replayed);
  for (const rid of mirror.liveRids()) if (mirror.versionOf(rid) > seq) out.add(rid);
  return [...out];
}
