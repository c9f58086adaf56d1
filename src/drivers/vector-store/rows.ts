// Writes to one generation's tables. Each public write is one `batch` (one transaction) that
// bumps the generation's change sequence once and stamps every touched row with it, so a replay
// after a checkpoint at sequence S is "every row with seq > S, every tombstone with seq > S".
import type { Client, InStatement, InValue } from "@libsql/client";
import { checkedMetadata, type GenerationSpec, type Metadata, metadataColumnName, type MetadataUpdate, type MetadataValue, type UpsertRow, VectorStoreError } from "../store-api/index.ts";
import { indexStatement, unindexStatement } from "./keyword-index.ts";
import { generationTables } from "./schema.ts";

export interface GenerationRef {
  collection: string;
  generation: number;
  spec: GenerationSpec;
}

/** Rows per multi-row INSERT: keeps bound parameters far below SQLite's limit. */
const ROWS_PER_STATEMENT = 64;

const seqQuery = "SELECT seq FROM vs_generations WHERE collection = ? AND generation = ?";

function seqExpr(): string {
  return `(${seqQuery})`;
}

function bumpSeq(ref: GenerationRef): InStatement[] {
  const args = [ref.collection, BigInt(ref.generation)];
  return [{ sql: "UPDATE vs_generations SET seq = seq + 1 WHERE collection = ? AND generation = ?", args }];
}

function readSeq(ref: GenerationRef): InStatement {
  return { sql: seqQuery, args: [ref.collection, BigInt(ref.generation)] };
}

/** Binds a row's metadata as its column types; the libSQL client sends JS numbers as REAL. */
export function bindMetadata(spec: GenerationSpec, metadata: Metadata, pk: string): InValue[] {
  return checkedMetadata(spec, metadata, pk).map((v, i) => {
    if (v === null) return null;
    const type = spec.metadata[i]!.type;
    if (type === "integer") return BigInt(v as number);
    if (type === "boolean") return v ? 1n : 0n;
    return v;
  });
}

/** The typed value of column `i` as read back from SQL (integers/booleans arrive as numbers). */
export function readMetadataValue(spec: GenerationSpec, i: number, raw: unknown): MetadataValue {
  if (raw === null || raw === undefined) return null;
  const type = spec.metadata[i]?.type;
  if (type === "boolean") return Number(raw) !== 0;
  if (type === "keyword") return String(raw);
  return Number(raw);
}

export function vectorBlob(vector: Float32Array, dimensions: number, pk: string): Uint8Array {
  if (vector.length !== dimensions) {
    throw new VectorStoreError("invalid_row", `row ${pk}: vector has ${vector.length} dimensions, collection has ${dimensions}`);
  }
  let norm = 0;
  for (let i = 0; i < vector.length; i++) {
    if (!Number.isFinite(vector[i]!)) throw new VectorStoreError("invalid_row", `row ${pk}: vector holds a non-finite value`);
    norm += vector[i]! * vector[i]!;
  }
  if (norm === 0) throw new VectorStoreError("invalid_row", `row ${pk}: a zero vector has no cosine similarity`);
  return new Uint8Array(vector.slice().buffer); // own buffer: never hand a view with an offset to a native binding
}

/**
 * One multi-row INSERT per ROWS_PER_STATEMENT rows into each table. The values come as one VALUES
 * list joined to the generation's sequence (read once, not twice a row) and, for the docs, to the
 * rows' rids: SQLite prepared the statements with a scalar subquery per tuple in 8.9 µs a row,
 * these in ~2. A pk given twice is written once, as its last row (as the mirror keeps it).
 */
export function upsertStatements(ref: GenerationRef, rows: UpsertRow[]): InStatement[] {
  const t = generationTables(ref.collection, ref.generation);
  const cols = ref.spec.metadata.map((_, i) => metadataColumnName(i));
  const rowCols = ["pk", "text_hash", "meta_hash", "seq", "vec_seq", ...cols];
  const updates = rowCols.slice(1).map((c) => `${c} = excluded.${c}`).join(", ");
  const picked = cols.map((_, i) => `, v.column${i + 4}`).join("");
  const rowTuple = `(?, ?, ?${cols.map(() => ", ?").join("")})`;
  const bound = rows.map((row) => ({ row, metadata: bindMetadata(ref.spec, row.metadata, row.pk), vec: vectorBlob(row.vector, ref.spec.dimensions, row.pk) })); // validates every row
  const written = lastOfEachPk(bound, (b) => b.row.pk);
  const statements: InStatement[] = [...bumpSeq(ref)];
  for (let start = 0; start < written.length; start += ROWS_PER_STATEMENT) {
    const chunk = written.slice(start, start + ROWS_PER_STATEMENT);
    const rowArgs: InValue[] = [];
    const docArgs: InValue[] = [];
    for (const { row, metadata, vec } of chunk) {
      rowArgs.push(row.pk, row.textHash, row.metaHash, ...metadata);
      docArgs.push(row.pk, row.text, vec);
    }
    // `WHERE true`: SQLite's upsert after INSERT … SELECT … FROM a join needs it to parse ON CONFLICT.
    statements.push({
      sql: `INSERT INTO ${t.rows} (${rowCols.join(", ")})
            SELECT v.column1, v.column2, v.column3, s.seq, s.seq${picked}
            FROM (VALUES ${chunk.map(() => rowTuple).join(", ")}) AS v, (${seqQuery}) AS s WHERE true
            ON CONFLICT (pk) DO UPDATE SET ${updates}`,
      args: [...rowArgs, ref.collection, BigInt(ref.generation)],
    });
    // The keyword index follows `docs` in this transaction: old texts out before, new ones in after (keyword-index.ts).
    const chunkRids = `SELECT r.rid FROM ${t.rows} r WHERE r.pk IN (SELECT value FROM json_each(?))`;
    const chunkPks = JSON.stringify(chunk.map((b) => b.row.pk));
    statements.push(unindexStatement(t, chunkRids, [chunkPks]));
    statements.push({
      sql: `INSERT OR REPLACE INTO ${t.docs} (rid, text, vec)
            SELECT r.rid, v.column2, v.column3 FROM (VALUES ${chunk.map(() => "(?, ?, ?)").join(", ")}) AS v JOIN ${t.rows} AS r ON r.pk = v.column1`,
      args: docArgs,
    });
    statements.push(indexStatement(t, chunkRids, [chunkPks]));
  }
  statements.push({
    sql: `SELECT rid, pk FROM ${t.rows} WHERE pk IN (SELECT value FROM json_each(?))`,
    args: [JSON.stringify(written.map((b) => b.row.pk))],
  });
  statements.push(readSeq(ref)); // last: runWrite reads the committed sequence from it
  return statements;
}

/** `items` less any whose key comes again later, in their order. */
function lastOfEachPk<T>(items: T[], key: (item: T) => string): T[] {
  const last = new Map<string, number>();
  items.forEach((item, i) => last.set(key(item), i));
  return last.size === items.length ? items : items.filter((item, i) => last.get(key(item)) === i);
}

export function deleteStatements(ref: GenerationRef, pks: string[]): InStatement[] {
  const t = generationTables(ref.collection, ref.generation);
  const list = JSON.stringify(pks);
  const match = `pk IN (SELECT value FROM json_each(?))`;
  return [
    ...bumpSeq(ref),
    {
      sql: `INSERT OR REPLACE INTO ${t.gone} (rid, seq) SELECT rid, ${seqExpr()} FROM ${t.rows} WHERE ${match}`,
      args: [ref.collection, BigInt(ref.generation), list],
    },
    unindexStatement(t, `SELECT rid FROM ${t.rows} WHERE ${match}`, [list]),
    { sql: `DELETE FROM ${t.docs} WHERE rid IN (SELECT rid FROM ${t.rows} WHERE ${match})`, args: [list] },
    { sql: `DELETE FROM ${t.rows} WHERE ${match} RETURNING rid`, args: [list] },
    readSeq(ref),
  ];
}

export function updateMetadataStatements(ref: GenerationRef, updates: MetadataUpdate[]): InStatement[] {
  const t = generationTables(ref.collection, ref.generation);
  const sets = ref.spec.metadata.map((_, i) => `, ${metadataColumnName(i)} = ?`).join("");
  return [
    ...bumpSeq(ref),
    ...updates.map((u) => ({
      sql: `UPDATE ${t.rows} SET meta_hash = ?, seq = ${seqExpr()}${sets} WHERE pk = ? RETURNING rid`,
      args: [u.metaHash, ref.collection, BigInt(ref.generation), ...bindMetadata(ref.spec, u.metadata, u.pk), u.pk],
    })),
    readSeq(ref),
  ];
}

/** Runs a write batch; returns the sequence it committed and every result set. */
export async function runWrite(client: Client, statements: InStatement[]) {
  const results = await client.batch(statements, "write");
  const seqRow = results[statements.length - 1]?.rows[0];
  return { seq: Number(seqRow?.[0] ?? 0), results };
}
