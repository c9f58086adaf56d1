// Row values between our types and Postgres text: metadata checked by the managed store's own
// checkedMetadata, vectors as pgvector's `[x,y,…]` text. Every parameter is sent as
// text (or null) and cast in SQL, so no client-side type inference is involved.
import { checkedMetadata, VectorStoreError, type GenerationSpec, type Metadata, type MetadataValue } from "../store-api/index.ts";
import { scalarText } from "./filters-pg.ts";

export type Param = string | null;

/** The metadata columns of one row, in spec order, as text parameters (checked as the managed store checks them). */
export function metadataParams(spec: GenerationSpec, metadata: Metadata, pk: string): Param[] {
  return checkedMetadata(spec, metadata, pk).map((v, i) => {
    if (v === null) return null;
    if (typeof v === "string") {
      // Postgres text cannot hold NUL; SQLite can, so only this store refuses it.
      if (v.includes("\u0000")) throw new VectorStoreError("invalid_row", `row ${pk}: metadata "${spec.metadata[i]!.name}" holds a NUL character`);
      return v;
    }
    return scalarText(v);
  });
}

/** A metadata value read back (postgres.js already parses bigint, float8 and bool; be sure). */
export function readValue(type: string, raw: unknown): MetadataValue {
  if (raw === null || raw === undefined) return null;
  if (type === "boolean") return raw === true || raw === "t" || raw === "true";
  if (type === "keyword") return String(raw);
  return Number(raw);
}

export function vectorText(vector: Float32Array, dimensions: number, pk: string): string {
  if (vector.length !== dimensions) {
    throw new VectorStoreError("invalid_row", `row ${pk}: vector has ${vector.length} dimensions, table has ${dimensions}`);
  }
  let norm = 0;
  for (const x of vector) {
    if (!Number.isFinite(x)) throw new VectorStoreError("invalid_row", `row ${pk}: vector holds a non-finite value`);
    norm += x * x;
  }
  if (norm === 0) throw new VectorStoreError("invalid_row", `row ${pk}: a zero vector has no cosine similarity`);
  // A float32 widened to a double prints exactly, and pgvector reads it back to the same float32.
  // (Concatenation: ~3× faster than Array.from(…).join for 384 values, and a query pays it.)
  let text = "[";
  for (let i = 0; i < vector.length; i++) text += i === 0 ? `${vector[i]}` : `,${vector[i]}`;
  return `${text}]`;
}

export function parseVectorText(text: string): Float32Array {
  const inner = text.trim().slice(1, -1);
  return inner === "" ? new Float32Array(0) : Float32Array.from(inner.split(","), Number);
}

/** Postgres text cannot hold NUL; say so as a row problem rather than a driver failure. */
export function assertText(value: string, what: string, pk: string): string {
  if (value.includes("\u0000")) throw new VectorStoreError("invalid_row", `row ${pk}: ${what} holds a NUL character`);
  return value;
}

/** The last entry per key wins, as it would applying the list in order. */
export function lastPerKey<T extends { pk: string }>(items: T[]): T[] {
  const byPk = new Map<string, T>();
  for (const item of items) {
    byPk.delete(item.pk);
    byPk.set(item.pk, item);
  }
  return [...byPk.values()];
}

/** Rows per multi-row statement, keeping bound parameters far below Postgres's 65,535. */
export function rowsPerStatement(paramsPerRow: number): number {
  return Math.max(1, Math.min(500, Math.floor(30_000 / paramsPerRow)));
}
