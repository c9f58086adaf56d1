// Named read queries on one generation's tables.
import type { Client, Row } from "@libsql/client";
import { metadataColumnName, type MetadataValue, type RowHashes, type SqlWhere, type StoredDoc } from "../store-api/index.ts";
import { readMetadataValue, type GenerationRef } from "./rows.ts";
import { generationTables } from "./schema.ts";

export interface StoredRow {
  rid: number;
  pk: string;
  text: string;
  seq: number;
  vecSeq: number;
  metadata: MetadataValue[];
  vector: Float32Array;
}

function metaSelect(ref: GenerationRef, alias: string): string {
  return ref.spec.metadata.map((_, i) => `, ${alias}.${metadataColumnName(i)}`).join("");
}

function toStoredRow(ref: GenerationRef, r: Row): StoredRow {
  const blob = r.vec as ArrayBuffer;
  return {
    rid: Number(r.rid),
    pk: String(r.pk),
    text: String(r.text),
    seq: Number(r.seq),
    vecSeq: Number(r.vec_seq),
    metadata: ref.spec.metadata.map((_, i) => readMetadataValue(ref.spec, i, r[metadataColumnName(i)])),
    vector: new Float32Array(blob.slice(0)),
  };
}

/** One page of full rows (metadata + vector), by ascending rid, for loading the mirror. */
export async function readRowPage(client: Client, ref: GenerationRef, afterRid: number, limit: number): Promise<StoredRow[]> {
  const t = generationTables(ref.collection, ref.generation);
  const rs = await client.execute({
    sql: `SELECT r.rid, r.pk, r.seq, r.vec_seq${metaSelect(ref, "r")}, d.text, d.vec FROM ${t.rows} r JOIN ${t.docs} d ON d.rid = r.rid
          WHERE r.rid > ? ORDER BY r.rid LIMIT ?`,
    args: [BigInt(afterRid), BigInt(limit)],
  });
  return rs.rows.map((r) => toStoredRow(ref, r));
}

/** How many rows the generation holds (every row in its rows table is live). */
export async function countRows(client: Client, ref: GenerationRef): Promise<number> {
  const t = generationTables(ref.collection, ref.generation);
  const rs = await client.execute(`SELECT count(*) AS n FROM ${t.rows}`);
  return Number(rs.rows[0]!.n);
}

/** Every change after `seq`, read in one snapshot: changed rows, tombstones, and the current seq. */
export async function readChangesSince(client: Client, ref: GenerationRef, seq: number) {
  const t = generationTables(ref.collection, ref.generation);
  const [rows, gone, current] = await client.batch(
    [
      {
        sql: `SELECT r.rid, r.pk, r.seq, r.vec_seq${metaSelect(ref, "r")}, d.text, d.vec FROM ${t.rows} r JOIN ${t.docs} d ON d.rid = r.rid WHERE r.seq > ?`,
        args: [BigInt(seq)],
      },
      { sql: `SELECT rid FROM ${t.gone} WHERE seq > ?`, args: [BigInt(seq)] },
      { sql: "SELECT seq FROM vs_generations WHERE collection = ? AND generation = ?", args: [ref.collection, BigInt(ref.generation)] },
    ],
    "read",
  );
  return {
    rows: rows!.rows.map((r) => toStoredRow(ref, r)),
    gone: gone!.rows.map((r) => Number(r.rid)),
    seq: Number(current!.rows[0]?.seq ?? seq),
  };
}

export async function readSeq(client: Client, ref: GenerationRef): Promise<number> {
  const rs = await client.execute({
    sql: "SELECT seq FROM vs_generations WHERE collection = ? AND generation = ?",
    args: [ref.collection, BigInt(ref.generation)],
  });
  return Number(rs.rows[0]?.seq ?? 0);
}

/**
 * The rids matching a filter, at most `cap + 1` of them, read through the metadata indexes.
 * One round trip: group_concat returns them as one string, far cheaper than one row each
 * (4,000 rids: ~0.4 ms against ~2.2 ms as rows through the client).
 */
export async function matchingRids(client: Client, ref: GenerationRef, where: SqlWhere, cap: number): Promise<{ count: number; rids: Uint32Array }> {
  const t = generationTables(ref.collection, ref.generation);
  const limit = cap === Infinity ? "" : ` LIMIT ${Math.floor(cap) + 1}`;
  const rs = await client.execute({
    sql: `SELECT count(*) AS n, group_concat(rid) AS ids FROM (SELECT rid FROM ${t.rows} WHERE ${where.sql}${limit})`,
    args: where.args,
  });
  const row = rs.rows[0];
  const count = Number(row?.n ?? 0);
  const ids = row?.ids ? String(row.ids).split(",") : [];
  return { count, rids: Uint32Array.from(ids, Number) };
}

export async function countMatching(client: Client, ref: GenerationRef, where: SqlWhere): Promise<number> {
  const t = generationTables(ref.collection, ref.generation);
  const rs = await client.execute({ sql: `SELECT count(*) AS n FROM ${t.rows} WHERE ${where.sql}`, args: where.args });
  return Number(rs.rows[0]?.n ?? 0);
}

/**
 * The f32 vectors and texts of a few rows by rid (refine.ts). One statement text whatever the
 * rids (a JSON list), so a read connection's statement cache keeps it prepared.
 */
export async function readVectorsAndTexts(client: Client, ref: GenerationRef, rids: number[]): Promise<Map<number, { vector: Float32Array; text: string }>> {
  const t = generationTables(ref.collection, ref.generation);
  const rs = await client.execute({
    sql: `SELECT rid, vec, text FROM ${t.docs} WHERE rid IN (SELECT value FROM json_each(?))`,
    args: [JSON.stringify(rids)],
  });
  return new Map(rs.rows.map((r) => [Number(r.rid), { vector: new Float32Array((r.vec as ArrayBuffer).slice(0)), text: String(r.text) }]));
}

/** Hashes for diffing: a page in pk (code point) order, or the given pks. */
export async function readHashes(client: Client, ref: GenerationRef, opts: { afterPk?: string; limit?: number; pks?: string[] }): Promise<RowHashes[]> {
  const t = generationTables(ref.collection, ref.generation);
  const rs = opts.pks
    ? await client.execute({
        sql: `SELECT pk, text_hash, meta_hash FROM ${t.rows} WHERE pk IN (SELECT value FROM json_each(?)) ORDER BY pk`,
        args: [JSON.stringify(opts.pks)],
      })
    : await client.execute({
        sql: `SELECT pk, text_hash, meta_hash FROM ${t.rows} ${opts.afterPk === undefined ? "" : "WHERE pk > ?"} ORDER BY pk LIMIT ?`,
        args: [...(opts.afterPk === undefined ? [] : [opts.afterPk]), BigInt(opts.limit ?? 1000)],
      });
  return rs.rows.map((r) => ({ pk: String(r.pk), textHash: String(r.text_hash), metaHash: String(r.meta_hash) }));
}

/** The stored text and vector of the given pks (absent pks are simply missing from the map). */
export async function readDocs(client: Client, ref: GenerationRef, pks: string[]): Promise<Map<string, StoredDoc>> {
  const out = new Map<string, StoredDoc>();
  if (pks.length === 0) return out;
  const t = generationTables(ref.collection, ref.generation);
  const rs = await client.execute({
    sql: `SELECT r.pk, d.text, d.vec FROM ${t.rows} r JOIN ${t.docs} d ON d.rid = r.rid WHERE r.pk IN (SELECT value FROM json_each(?))`,
    args: [JSON.stringify(pks)],
  });
  for (const row of rs.rows) out.set(String(row.pk), { text: String(row.text), vector: new Float32Array((row.vec as ArrayBuffer).slice(0)) });
  return out;
}

/** Drops tombstones a checkpoint covers (single writer process; see docs/running.md#one-process). */
export async function pruneTombstones(client: Client, ref: GenerationRef, seq: number): Promise<void> {
  const t = generationTables(ref.collection, ref.generation);
  await client.execute({ sql: `DELETE FROM ${t.gone} WHERE seq <= ?`, args: [BigInt(seq)] });
}
