// Reads a usearch 2.x dense index file in JS and checks it before native code sees it: a file
// usearch would mis-handle aborts the process (a native abort cannot be caught), so every field
// that sizes an allocation or addresses a slot is checked here. Layout, from usearch's
// include/usearch/index_dense.hpp (save_to_stream) and index.hpp (index_gt::save_to_stream),
// 32-bit matrix dimensions (usearch's default), little-endian:
//   u32 rows, u32 bytes per vector; rows × bytes of vectors;
//   64-byte head: "usearch", u16 major/minor/patch, u8 metric/scalar/key kind/slot kind,
//                 u64 count_present @17, u64 count_deleted @25, u64 dimensions @33, u8 multi @41;
//   graph head: u64 size, connectivity, connectivity_base, max_level, entry_slot;
//   i16 level per node; per node: u64 key, i16 level, then for level 0 and each level above:
//   u32 neighbour count + connectivity_base (level 0) or connectivity slots of u32.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";

const MAGIC = "usearch";
const HEAD_BYTES = 64;
const GRAPH_HEAD_BYTES = 40;
/** usearch's scalar_kind codes for the key (u64) and compressed slot (u32) types we build with. */
const KEY_KIND_U64 = 14;
const SLOT_KIND_U32 = 15;

export interface IndexFileExpect {
  dimensions: number;
  bytesPerVector: number;
  connectivity: number;
}

export interface IndexFileInfo {
  count: number;
}

/**
 * Parses and checks the whole graph (one pass); returns the problem or the facts. The file is read
 * through a window (FileWindow), its vectors skipped: read whole, its copy (twice the file, chunks
 * then their concatenation) was the start-up's peak, ~1.1 GB at 600k × 384 for a 320 MB file, just
 * before usearch loads it (docs/architecture.md#stores). That file now checks in 27-48 ms, 184-282 before.
 */
export function checkIndexFile(path: string, want: IndexFileExpect, windowBytes = WINDOW_BYTES): IndexFileInfo | string {
  const file = new FileWindow(path, windowBytes);
  try {
    return checkOpened(file, want);
  } finally {
    file.close();
  }
}

function checkOpened(file: FileWindow, want: IndexFileExpect): IndexFileInfo | string {
  if (file.size < 8 + HEAD_BYTES + GRAPH_HEAD_BYTES) return "index file too short for its headers";
  let at = file.at(0, 8);
  const rows = file.dv.getUint32(at, true);
  const cols = file.dv.getUint32(at + 4, true);
  if (cols !== want.bytesPerVector) return `index file holds ${cols}-byte vectors, expected ${want.bytesPerVector}`;
  const head = 8 + rows * cols;
  if (head + HEAD_BYTES + GRAPH_HEAD_BYTES > file.size) return "index file shorter than its vectors";
  at = file.at(head, HEAD_BYTES);
  const { dv, buf } = file;
  if (buf.subarray(at, at + MAGIC.length).toString("latin1") !== MAGIC) return "index file header has no usearch magic";
  if (dv.getUint16(at + 7, true) !== 2) return "index file written by another usearch major version";
  if (buf[at + 15] !== KEY_KIND_U64 || buf[at + 16] !== SLOT_KIND_U32) return "index file key or slot type differs";
  const present = Number(dv.getBigUint64(at + 17, true));
  const deleted = Number(dv.getBigUint64(at + 25, true));
  // Deleted slots are what crash usearch's JS load (hnsw.ts); we never write them.
  if (deleted !== 0) return `index file holds ${deleted} deleted slots`;
  if (present !== rows) return `index file header counts ${present} vectors, its matrix ${rows}`;
  if (Number(dv.getBigUint64(at + 33, true)) !== want.dimensions) return "index file has other dimensions";
  if (buf[at + 41] !== 0) return "index file is a multi-key index";
  return checkGraph(file, head + HEAD_BYTES, rows, want.connectivity) ?? { count: rows };
}

/** The graph: sizes, levels, and every neighbour slot within bounds; no free key. */
function checkGraph(file: FileWindow, graph: number, rows: number, connectivity: number): string | null {
  let at = file.at(graph, GRAPH_HEAD_BYTES);
  const size = Number(file.dv.getBigUint64(at, true));
  const m = Number(file.dv.getBigUint64(at + 8, true));
  const m0 = Number(file.dv.getBigUint64(at + 16, true));
  const maxLevel = Number(file.dv.getBigUint64(at + 24, true));
  const entry = Number(file.dv.getBigUint64(at + 32, true));
  if (size !== rows) return `index graph holds ${size} nodes, its matrix ${rows}`;
  if (m !== connectivity || m0 < m || m0 > 4 * m) return "index graph connectivity differs";
  if (size > 0 && (entry >= size || maxLevel > 64)) return "index graph entry point out of bounds";
  const levelsAt = graph + GRAPH_HEAD_BYTES;
  let node = levelsAt + 2 * size;
  if (node > file.size) return "index file shorter than its graph";
  // The levels, one i16 per node, come before the nodes; kept apart (2 bytes a node) to walk both.
  const levels = file.copy(levelsAt, 2 * size);
  const levelsDv = new DataView(levels.buffer, levels.byteOffset, levels.byteLength);
  let topLevel = 0;
  for (let slot = 0; slot < size; slot++) {
    const level = levelsDv.getInt16(2 * slot, true);
    if (level < 0 || level > maxLevel) return `index graph node ${slot} has level ${level}`;
    topLevel = Math.max(topLevel, level);
    const bytes = 10 + 4 + 4 * m0 + level * (4 + 4 * m);
    if (node + bytes > file.size) return "index file shorter than its graph";
    at = file.at(node, bytes);
    const dv = file.dv;
    if (dv.getBigUint64(at, true) === 0xffffffffffffffffn) return `index graph node ${slot} is a free slot`;
    if (dv.getInt16(at + 8, true) !== level) return `index graph node ${slot} disagrees on its level`;
    let list = at + 10;
    for (let l = 0; l <= level; l++) {
      const cap = l === 0 ? m0 : m;
      const count = dv.getUint32(list, true);
      if (count > cap) return `index graph node ${slot} has ${count} neighbours at level ${l}`;
      for (let i = 0; i < count; i++) if (dv.getUint32(list + 4 + 4 * i, true) >= size) return `index graph node ${slot} links outside the graph`;
      list += 4 + 4 * cap;
    }
    node += bytes;
  }
  if (node !== file.size) return `index file has ${file.size - node} bytes past its graph`;
  if (size > 0 && topLevel !== maxLevel) return "index graph max level disagrees with its nodes";
  return null;
}

/** Window size: a node is at most ~4.4 KB (65 levels at connectivity 16), a window holds thousands. */
const WINDOW_BYTES = 4 << 20;

/** Positional reads of a file through one reused buffer; callers read mostly forward. */
class FileWindow {
  buf: Buffer;
  dv: DataView;
  readonly size: number;
  private readonly fd: number;
  private start = 0;
  private end = 0;

  constructor(path: string, windowBytes: number) {
    this.buf = Buffer.allocUnsafe(windowBytes);
    this.dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.fd = openSync(path, "r");
    this.size = fstatSync(this.fd).size;
  }

  /** Makes bytes [pos, pos + length) readable in `buf`/`dv`; answers where `pos` is there. Within `size`. */
  at(pos: number, length: number): number {
    if (pos >= this.start && pos + length <= this.end) return pos - this.start;
    if (length > this.buf.length) {
      this.buf = Buffer.allocUnsafe(length);
      this.dv = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    }
    this.start = pos;
    this.end = pos + this.fill(this.buf, pos, Math.min(this.buf.length, this.size - pos));
    return 0;
  }

  /** Bytes [pos, pos + length) in a buffer of their own. */
  copy(pos: number, length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    this.fill(out, pos, length);
    return out;
  }

  close(): void {
    closeSync(this.fd);
  }

  private fill(into: Buffer, pos: number, length: number): number {
    let done = 0;
    while (done < length) {
      const n = readSync(this.fd, into, done, length - done, pos + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  }
}
