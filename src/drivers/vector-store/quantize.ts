// i8 codes of unit vectors for the wide exact scan (exact.ts): each vector scaled by 127 / its
// largest component, so every code uses the whole i8 range. The per-vector scale distorts inner
// products but not cosines, and the scan ranks by cosine; the chosen rows are then re-scored in f32.

/** Writes the codes of `src[from, from + dims)` to `out[at, at + dims)`. */
export function quantizeInto(src: Float32Array, from: number, dims: number, out: Int8Array, at: number): void {
  let max = 0;
  for (let j = 0; j < dims; j++) {
    const a = Math.abs(src[from + j]!);
    if (a > max) max = a;
  }
  const scale = max === 0 ? 0 : 127 / max;
  for (let j = 0; j < dims; j++) out[at + j] = Math.round(src[from + j]! * scale);
}

/** The codes of one query, in their own buffer (usearch ignores typed-array offsets). */
export function quantizeQuery(query: Float32Array): Int8Array {
  const out = new Int8Array(query.length);
  quantizeInto(query, 0, query.length, out, 0);
  return out;
}
