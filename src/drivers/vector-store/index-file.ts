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
import { closeSync, openSync, readSync } from "node:fs";

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

/** Parses and checks the whole file (one pass, ~10 ms per 100k nodes); returns the problem or the facts. */
export function checkIndexFile(path: string, want: IndexFileExpect): IndexFileInfo | string {
  const buf = readAll(path);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  if (buf.length < 8 + HEAD_BYTES + GRAPH_HEAD_BYTES) return "index file too short for its headers";
  const rows = dv.getUint32(0, true);
  const cols = dv.getUint32(4, true);
  if (cols !== want.bytesPerVector) return `index file holds ${cols}-byte vectors, expected ${want.bytesPerVector}`;
  const head = 8 + rows * cols;
  if (head + HEAD_BYTES + GRAPH_HEAD_BYTES > buf.length) return "index file shorter than its vectors";
  if (buf.subarray(head, head + MAGIC.length).toString("latin1") !== MAGIC) return "index file header has no usearch magic";
  if (dv.getUint16(head + 7, true) !== 2) return "index file written by another usearch major version";
  if (buf[head + 15] !== KEY_KIND_U64 || buf[head + 16] !== SLOT_KIND_U32) return "index file key or slot type differs";
  const present = Number(dv.getBigUint64(head + 17, true));
  const deleted = Number(dv.getBigUint64(head + 25, true));
  // Deleted slots are what crash usearch's JS load (hnsw.ts); we never write them.
  if (deleted !== 0) return `index file holds ${deleted} deleted slots`;
  if (present !== rows) return `index file header counts ${present} vectors, its matrix ${rows}`;
  if (Number(dv.getBigUint64(head + 33, true)) !== want.dimensions) return "index file has other dimensions";
  if (buf[head + 41] !== 0) return "index file is a multi-key index";
  return checkGraph(buf, dv, head + HEAD_BYTES, rows, want.connectivity) ?? { count: rows };
}

/** The graph: sizes, levels, and every neighbour slot within bounds; no free key. */
function checkGraph(buf: Buffer, dv: DataView, at: number, rows: number, connectivity: number): string | null {
  const size = Number(dv.getBigUint64(at, true));
  const m = Number(dv.getBigUint64(at + 8, true));
  const m0 = Number(dv.getBigUint64(at + 16, true));
  const maxLevel = Number(dv.getBigUint64(at + 24, true));
  const entry = Number(dv.getBigUint64(at + 32, true));
  if (size !== rows) return `index graph holds ${size} nodes, its matrix ${rows}`;
  if (m !== connectivity || m0 < m || m0 > 4 * m) return "index graph connectivity differs";
  if (size > 0 && (entry >= size || maxLevel > 64)) return "index graph entry point out of bounds";
  const levels = at + GRAPH_HEAD_BYTES;
  let node = levels + 2 * size;
  if (node > buf.length) return "index file shorter than its graph";
  let topLevel = 0;
  for (let slot = 0; slot < size; slot++) {
    const level = dv.getInt16(levels + 2 * slot, true);
    if (level < 0 || level > maxLevel) return `index graph node ${slot} has level ${level}`;
    topLevel = Math.max(topLevel, level);
    const bytes = 10 + 4 + 4 * m0 + level * (4 + 4 * m);
    if (node + bytes > buf.length) return "index file shorter than its graph";
    if (dv.getBigUint64(node, true) === 0xffffffffffffffffn) return `index graph node ${slot} is a free slot`;
    if (dv.getInt16(node + 8, true) !== level) return `index graph node ${slot} disagrees on its level`;
    let list = node + 10;
    for (let l = 0; l <= level; l++) {
      const cap = l === 0 ? m0 : m;
      const count = dv.getUint32(list, true);
      if (count > cap) return `index graph node ${slot} has ${count} neighbours at level ${l}`;
      for (let i = 0; i < count; i++) if (dv.getUint32(list + 4 + 4 * i, true) >= size) return `index graph node ${slot} links outside the graph`;
      list += 4 + 4 * cap;
    }
    node += bytes;
  }
  if (node !== buf.length) return `index file has ${buf.length - node} bytes past its graph`;
  if (size > 0 && topLevel !== maxLevel) return "index graph max level disagrees with its nodes";
  return null;
}

function readAll(path: string): Buffer {
  const fd = openSync(path, "r");
  try {
    const chunks: Buffer[] = [];
    for (;;) {
      const chunk = Buffer.allocUnsafe(8 << 20);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) return Buffer.concat(chunks);
      chunks.push(chunk.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
}
