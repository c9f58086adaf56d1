// Index checkpoints on disk. Per generation: `<base>.s<seq>.usearch` (the index, named by the
// change sequence it covers) and `<base>.json` (its description: seq, count, size, crc32, params).
// Each file is written to a temp name, fsynced, renamed, then the directory is fsynced; the
// description is renamed last, so a crash leaves either the old pair or the new one. The same
// description is recorded in libSQL (vs_checkpoints) by the caller: a description rewritten
// beside a damaged file cannot match it. Any doubt on load (missing, truncated, checksum,
// params, count, header, graph) means "rebuild", never "serve" — and never "crash": the file is
// checked in JS (index-file.ts) before usearch reads it, and a `<base>.loading` marker is left
// while usearch reads it, so a start that died inside usearch makes the next start rebuild.
// The description's stray list, what it holds and how it is capped, is saved-strays.ts.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { fsyncPath, fsyncPathAsync } from "../../shared/files.ts";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { HnswIndex } from "./hnsw.ts";
import { checkIndexFile } from "./index-file.ts";
import { searchBreadth } from "./planner.ts";
import { readableStrays, type SavedStrays, savedStrays, type StrayState } from "./saved-strays.ts";
import type { IndexParams } from "./types.ts";

/**
 * The description's format. An index file is a cache of what libSQL holds: a description of any
 * other format is not read, and the generation's index is rebuilt (restart.ts), so there are no
 * branches for older files.
 */
const FORMAT = 2;
const SCALAR = "i8"; // the index's, a byte a dimension: a description naming another is refused

export interface CheckpointMeta {
  format: number;
  collection: string;
  generation: number;
  seq: number;
  count: number;
  dimensions: number;
  scalar: string;
  connectivity: number;
  file: string;
  bytes: number;
  crc32: number;
  /** What was known of the file's strays when it was saved. */
  strays: SavedStrays;
}

export type LoadedCheckpoint = { ok: true; index: HnswIndex; meta: CheckpointMeta } | { ok: false; problem: string };

/** What libSQL recorded of the generation's last checkpoint (registry.ts). */
export type CheckpointRecord = Pick<CheckpointMeta, "file" | "seq" | "count" | "bytes" | "crc32">;

function baseName(collection: string, generation: number): string {
  return `${collection}.g${generation}`;
}

function fileCrc32(path: string): number {
  const fd = openSync(path, "r");
  const buf = Buffer.allocUnsafe(4 << 20);
  let crc = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) return crc;
      crc = crc32(buf.subarray(0, n), crc);
    }
  } finally {
    closeSync(fd);
  }
}

/** An index saved under a temporary name, not yet durable nor described (completeCheckpoint). */
export interface SavedIndex {
  dir: string;
  base: string;
  tmp: string;
  meta: Omit<CheckpointMeta, "bytes" | "crc32">;
}

/**
 * Saves the index under a temporary name, with the stray list taken first. The caller keeps
 * insertions out until this returns (later.ts `holding`), so that list describes the graph the
 * file holds; the rest (`completeCheckpoint`) reads only the file, and writes go on meanwhile.
 * The save runs off the event loop: at 100k × 256 it held it 100-200 ms every few seconds of a
 * fill, at 1M × 768 seconds.
 */
export async function saveCheckpointIndex(dir: string, collection: string, generation: number, seq: number, index: HnswIndex, strays: StrayState): Promise<SavedIndex> {
  mkdirSync(dir, { recursive: true });
  const base = baseName(collection, generation);
  const file = `${base}.s${seq}.usearch`;
  const tmp = join(dir, `${file}.tmp`);
  const listed = savedStrays(index, strays);
  const count = await index.saveAsync(tmp);
  const meta = { format: FORMAT, collection, generation, seq, count, dimensions: index.dims, scalar: SCALAR, connectivity: index.params.connectivity, file, strays: listed };
  return { dir, base, tmp, meta };
}

/**
 * Makes a saved index durable under its name, then writes its description (the checksum read
 * back off the loop). The caller records the description in libSQL, then calls
 * `removeCheckpointFiles(…, meta.file)` to drop the previous file. Nothing here reads the index:
 * the fsync of a 1M-row file took seconds, and writes and insertions no longer wait for it.
 */
export async function completeCheckpoint(saved: SavedIndex): Promise<CheckpointMeta> {
  const path = join(saved.dir, saved.meta.file);
  await fsyncPathAsync(saved.tmp);
  renameSync(saved.tmp, path);
  const meta: CheckpointMeta = { ...saved.meta, bytes: statSync(path).size, crc32: await fileCrc32Async(path) };
  writeMeta(saved.dir, saved.base, meta);
  return meta;
}

/** Both steps at once: an index nothing writes to meanwhile (tests, tools). */
export async function writeCheckpoint(dir: string, collection: string, generation: number, seq: number, index: HnswIndex, strays: StrayState): Promise<CheckpointMeta> {
  return completeCheckpoint(await saveCheckpointIndex(dir, collection, generation, seq, index, strays));
}

/** `fileCrc32`, reading off the loop a chunk at a time. */
async function fileCrc32Async(path: string): Promise<number> {
  const handle = await open(path, "r");
  const buf = Buffer.allocUnsafe(4 << 20);
  let crc = 0;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(buf, 0, buf.length, null);
      if (bytesRead === 0) return crc;
      crc = crc32(buf.subarray(0, bytesRead), crc);
    }
  } finally {
    await handle.close();
  }
}

/**
 * Does a description's whole stray list hold for searches over `liveRows` rows now? Only if its
 * rows were checked no deeper than those searches run: deletes since the save lower the breadth,
 * as would a change of its rule.
 */
export function strayListFits(meta: CheckpointMeta, liveRows: number, expansionSearch: number): boolean {
  return meta.strays.whole && meta.strays.depth <= searchBreadth(liveRows, expansionSearch);
}

/** The description, written to a temp name, fsynced, renamed over the old one. */
function writeMeta(dir: string, base: string, meta: CheckpointMeta): void {
  const metaTmp = join(dir, `${base}.json.tmp`);
  writeFileSync(metaTmp, JSON.stringify(meta));
  fsyncPath(metaTmp);
  renameSync(metaTmp, join(dir, `${base}.json`));
  fsyncPath(dir);
}

/**
 * A sweep finished after the last checkpoint: its description takes the strays found, provided
 * the file is this very index (same sequence, same key count: nothing added since). False when
 * it is not; the next checkpoint then carries them.
 */
export function rewriteStrays(dir: string, collection: string, generation: number, seq: number, index: HnswIndex, strays: StrayState): boolean {
  const base = baseName(collection, generation);
  const meta = readMeta(dir, base);
  if (typeof meta === "string" || meta.seq !== seq || meta.count !== index.size) return false;
  writeMeta(dir, base, { ...meta, strays: savedStrays(index, strays) });
  return true;
}

/** Deletes a generation's checkpoint files, except `keep`. */
export function removeCheckpointFiles(dir: string, collection: string, generation: number, keep?: string): void {
  if (!existsSync(dir)) return;
  const base = baseName(collection, generation);
  for (const name of readdirSync(dir)) {
    if (name === keep || !name.startsWith(`${base}.`)) continue;
    if (keep && name === `${base}.json`) continue;
    const rest = name.slice(base.length + 1);
    if (keep && rest === "loading") continue;
    if (/^(s\d+\.usearch(\.tmp)?|json(\.tmp)?|loading)$/.test(rest)) unlinkSync(join(dir, name));
  }
}

function readMeta(dir: string, base: string): CheckpointMeta | string {
  const path = join(dir, `${base}.json`);
  if (!existsSync(path)) return "no checkpoint description";
  try {
    const meta = JSON.parse(readFileSync(path, "utf8")) as CheckpointMeta;
    if (meta.format !== FORMAT) return `checkpoint description of format ${String(meta.format)}, not ${FORMAT}`;
    if (typeof meta.file !== "string" || typeof meta.crc32 !== "number" || !readableStrays(meta.strays)) return "unreadable checkpoint description";
    return meta;
  } catch {
    return "unreadable checkpoint description";
  }
}

function loadingMarker(dir: string, collection: string, generation: number): string {
  return join(dir, `${baseName(collection, generation)}.loading`);
}

/** Every check that needs no native code; null when the file may be handed to usearch. */
function vetCheckpoint(dir: string, meta: CheckpointMeta, dims: number, params: IndexParams, recorded: CheckpointRecord | null): string | null {
  const path = join(dir, meta.file);
  if (!existsSync(path)) return "index file missing";
  const bytes = statSync(path).size;
  if (bytes !== meta.bytes) return `index file is ${bytes} bytes, expected ${meta.bytes}`;
  const crc = fileCrc32(path);
  if (crc !== meta.crc32) return "index file checksum mismatch";
  const info = checkIndexFile(path, { dimensions: dims, bytesPerVector: dims, connectivity: params.connectivity });
  if (typeof info === "string") return info;
  if (info.count !== meta.count) return `index holds ${info.count} vectors, its description ${meta.count}`;
  if (!recorded) return "no checkpoint recorded in libSQL";
  if (info.count !== recorded.count) return `index holds ${info.count} vectors, libSQL ${recorded.count} (recorded at its checkpoint)`;
  if (recorded.file !== meta.file || recorded.seq !== meta.seq || recorded.bytes !== bytes || recorded.crc32 !== crc) {
    return "index file or description differs from the checkpoint recorded in libSQL";
  }
  return null;
}

/**
 * Loads a generation's checkpoint if every check passes. A `.loading` marker found here means
 * the previous start died inside usearch on this file: its files are removed, never retried.
 */
export function loadCheckpoint(dir: string, collection: string, generation: number, dims: number, params: IndexParams, recorded: CheckpointRecord | null): LoadedCheckpoint {
  const marker = loadingMarker(dir, collection, generation);
  if (existsSync(marker)) {
    removeCheckpointFiles(dir, collection, generation);
    return { ok: false, problem: "a previous start died while loading this index" };
  }
  const meta = readMeta(dir, baseName(collection, generation));
  if (typeof meta === "string") return { ok: false, problem: meta };
  if (meta.collection !== collection || meta.generation !== generation) return { ok: false, problem: "checkpoint of another collection" };
  if (meta.dimensions !== dims || meta.scalar !== SCALAR || meta.connectivity !== params.connectivity) {
    return { ok: false, problem: "checkpoint made with other index parameters" };
  }
  const problem = vetCheckpoint(dir, meta, dims, params, recorded);
  if (problem) return { ok: false, problem };
  const index = new HnswIndex(dims, params);
  writeFileSync(marker, "", { mode: 0o600 });
  try {
    index.load(join(dir, meta.file));
  } catch (e) {
    return { ok: false, problem: `index file rejected by usearch: ${String(e)}` };
  } finally {
    unlinkSync(marker);
  }
  if (index.size !== meta.count) return { ok: false, problem: `index holds ${index.size} vectors, expected ${meta.count}` };
  // Known strays serve at once; the sweep after the load confirms them and finds new ones.
  for (const rid of meta.strays.rows) if (Number.isInteger(rid) && rid >= 0) index.strays.add(rid);
  return { ok: true, index, meta };
}
