// The last step of a search on a compact mirror (mirror.ts): its candidates were chosen and
// ordered by the i8 codes' cosine, which is close to the f32 cosine but not equal. The first
// refineRows(k) of them are read back from libSQL (f32 vector and text, one statement) and
// scored exactly, so hits carry the same exact scores as on a mirror that keeps f32 vectors.
import type { Client } from "@libsql/client";
import { type Candidate, cutWithTies } from "./exact.ts";
import { readVectorsAndTexts } from "./reads.ts";
import type { GenerationRef } from "./rows.ts";

/**
 * Candidates read back per search. The codes' order holds the true top-10 within its first 15 on
 * every run measured (100k clustered rows at 384 and 768 dims: recall@10 0.977 from the first 10,
 * 0.9985 from 12, 1.0 from 15); twice k leaves a margin.
 */
export function refineRows(k: number): number {
  return Math.max(2 * k, k + 10);
}

export interface Refined {
  /** Exact distances, cut to k with the rows tied with the last. */
  candidates: Candidate[];
  /** Each kept row's embedded text. */
  texts: Map<number, string>;
}

/** `query` is a unit vector. A row deleted since it was chosen is simply not found, and dropped. */
export async function refine(client: Client, ref: GenerationRef, query: Float32Array, candidates: Candidate[], k: number): Promise<Refined> {
  if (candidates.length === 0) return { candidates: [], texts: new Map() };
  const rows = await readVectorsAndTexts(client, ref, candidates.map((c) => c.rid));
  const exact: Candidate[] = [];
  for (const { rid } of candidates) {
    const row = rows.get(rid);
    if (row) exact.push({ rid, distance: cosineDistance(query, row.vector) });
  }
  const kept = cutWithTies(exact, k);
  return { candidates: kept, texts: new Map(kept.map((c) => [c.rid, rows.get(c.rid)!.text])) };
}

/** 1 − cos, accumulated in f64 as exact.ts `rescore` does. */
export function cosineDistance(query: Float32Array, vector: Float32Array): number {
  let dot = 0;
  let qq = 0;
  let vv = 0;
  for (let j = 0; j < query.length; j++) {
    dot += query[j]! * vector[j]!;
    qq += query[j]! * query[j]!;
    vv += vector[j]! * vector[j]!;
  }
  return qq === 0 || vv === 0 ? 1 : 1 - dot / Math.sqrt(qq * vv);
}
