// Damage done to a stopped service's data dir: the five corruptions of an index file of
// test/drivers/vector-store/durability.test.ts, the same damage with its description (the JSON
// beside the index) rewritten to match (size and crc32 of the damaged file, issue 12, 8), a
// zeroed middle, and a libSQL WAL cut in the middle of a frame.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";

export const indexDirOf = (dataDir: string) => join(dataDir, "indexes");
// Inside the data dir (the service ignores it), so it goes when the data dir does.
const staleDirOf = (dataDir: string) => join(dataDir, "faults-stale");

type Meta = { file: string; seq: number; bytes: number; crc32: number };
type Pair = { meta: string; file: string; m: Meta };

/** Every generation's description and index file (one per collection in a fault world). */
function pairs(dataDir: string): Pair[] {
  const dir = indexDirOf(dataDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => /\.g\d+\.json$/.test(n))
    .map((n) => {
      const meta = join(dir, n);
      const m = JSON.parse(readFileSync(meta, "utf8")) as Meta;
      return { meta, file: join(dir, m.file), m };
    });
}

/** Keeps a copy of today's checkpoint, the "stale index" of a later corruption. */
export function keepStale(dataDir: string): void {
  const to = staleDirOf(dataDir);
  mkdirSync(to, { recursive: true });
  for (const p of pairs(dataDir)) {
    cpSync(p.meta, join(to, p.meta.split("/").pop()!));
    cpSync(p.file, join(to, p.m.file));
  }
}

function flipMiddle(file: string): void {
  const buf = readFileSync(file);
  const at = Math.floor(buf.length / 2);
  for (let i = 0; i < 64; i++) buf[at + i] = buf[at + i]! ^ 0xff;
  writeFileSync(file, buf);
}

function zeroMiddle(file: string): void {
  const buf = readFileSync(file);
  buf.fill(0, Math.floor(buf.length / 3), Math.floor((2 * buf.length) / 3));
  writeFileSync(file, buf);
}

/** The description made to agree with whatever the file now is. */
function rewriteToMatch(p: Pair): void {
  writeFileSync(p.meta, JSON.stringify({ ...p.m, bytes: statSync(p.file).size, crc32: crc32(readFileSync(p.file)) }));
}

/** `passesChecks`: the description still vouches for the file, so the damaged index may load. */
export type Damage = { name: string; passesChecks?: boolean; apply(dataDir: string): void };

const eachPair = (f: (p: Pair, dataDir: string) => void) => (dataDir: string) => {
  const ps = pairs(dataDir);
  if (ps.length === 0) throw new Error("no index checkpoint to damage");
  for (const p of ps) f(p, dataDir);
};

export const DAMAGES: Damage[] = [
  { name: "index file missing", apply: eachPair((p) => unlinkSync(p.file)) },
  { name: "index file truncated", apply: eachPair((p) => truncateSync(p.file, 1000)) },
  { name: "bytes flipped inside the index", apply: eachPair((p) => flipMiddle(p.file)) },
  { name: "description garbled", apply: eachPair((p) => writeFileSync(p.meta, "{not json")) },
  {
    name: "stale index claiming a newer sequence",
    passesChecks: true,
    apply: eachPair((p, dataDir) => {
      const stale = join(staleDirOf(dataDir), p.meta.split("/").pop()!);
      const old = JSON.parse(readFileSync(stale, "utf8")) as Meta;
      cpSync(join(staleDirOf(dataDir), old.file), join(indexDirOf(dataDir), old.file));
      writeFileSync(p.meta, JSON.stringify({ ...old, seq: p.m.seq }));
    }),
  },
  { name: "bytes flipped, description rewritten to match", passesChecks: true, apply: eachPair((p) => (flipMiddle(p.file), rewriteToMatch(p))) },
  { name: "index truncated, description rewritten to match", passesChecks: true, apply: eachPair((p) => (truncateSync(p.file, Math.floor(p.m.bytes / 2)), rewriteToMatch(p))) },
  { name: "zeroed middle", apply: eachPair((p) => zeroMiddle(p.file)) },
  { name: "zeroed middle, description rewritten to match", passesChecks: true, apply: eachPair((p) => (zeroMiddle(p.file), rewriteToMatch(p))) },
];

/**
 * Cuts `vecsync.db-wal` in the middle of its last current frame (a frame is a 24-byte header and
 * one page; the page size is in the WAL header). After a checkpoint SQLite reuses the file from
 * the start, so frames past the current ones are left over from before: the current ones are
 * those carrying the header's salts. Answers the cut, or null when the WAL holds no current frame
 * (the caller fails: it did not test what it says).
 */
export function truncateWalTail(dataDir: string): { bytes: number; frames: number; cutAt: number } | null {
  const wal = join(dataDir, "vecsync.db-wal");
  if (!existsSync(wal)) return null;
  const buf = readFileSync(wal);
  if (buf.length < 32) return null;
  const frame = 24 + buf.readUInt32BE(8);
  const salts = buf.subarray(16, 24);
  let frames = 0;
  while (32 + (frames + 1) * frame <= buf.length && buf.subarray(32 + frames * frame + 8, 32 + frames * frame + 16).equals(salts)) frames++;
  if (frames === 0) return null;
  const cutAt = 32 + (frames - 1) * frame + Math.floor(frame / 2);
  truncateSync(wal, cutAt);
  return { bytes: buf.length, frames, cutAt };
}
