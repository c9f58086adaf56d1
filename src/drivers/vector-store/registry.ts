// Named queries on the registry (vs_collections, vs_generations). Multi-statement changes go
// through `client.batch(…, "write")`, which libSQL runs as one transaction, locally and remotely.
import type { Client, InStatement } from "@libsql/client";
import type { CheckpointRecord } from "./checkpoint.ts";
import { type GenerationSpec, VectorStoreError } from "../store-api/index.ts";
import { createGenerationDdl, dropGenerationDdl, REGISTRY_DDL } from "./schema.ts";

/** `retired`: swapped out, its tables dropped as soon as no search holds it (or at next start). */
export type GenerationRowState = "building" | "live" | "retired";

export interface GenerationRecord {
  collection: string;
  generation: number;
  state: GenerationRowState;
  spec: GenerationSpec;
  seq: number;
}

export async function ensureRegistry(client: Client): Promise<void> {
  await client.batch(REGISTRY_DDL, "write");
}

export async function listGenerations(client: Client, collection?: string): Promise<GenerationRecord[]> {
  const rs = await client.execute({
    sql: `SELECT collection, generation, state, spec, seq FROM vs_generations
          WHERE ?1 IS NULL OR collection = ?1 ORDER BY collection, generation`,
    args: [collection ?? null],
  });
  return rs.rows.map((r) => ({
    collection: String(r.collection),
    generation: Number(r.generation),
    state: String(r.state) as GenerationRowState,
    spec: JSON.parse(String(r.spec)) as GenerationSpec,
    seq: Number(r.seq),
  }));
}

export async function collectionExists(client: Client, name: string): Promise<boolean> {
  const rs = await client.execute({ sql: "SELECT 1 FROM vs_collections WHERE name = ?", args: [name] });
  return rs.rows.length > 0;
}

function insertGeneration(name: string, generation: number, state: GenerationRowState, spec: GenerationSpec): InStatement {
  return {
    sql: "INSERT INTO vs_generations (collection, generation, state, spec, seq, created_at) VALUES (?, ?, ?, ?, 0, ?)",
    args: [name, BigInt(generation), state, JSON.stringify(spec), new Date().toISOString()],
  };
}

export async function insertCollection(client: Client, name: string, spec: GenerationSpec): Promise<void> {
  if (await collectionExists(client, name)) throw new VectorStoreError("collection_exists", `collection ${name} exists`);
  await client.batch(
    [
      { sql: "INSERT INTO vs_collections (name, live_generation, created_at) VALUES (?, 1, ?)", args: [name, new Date().toISOString()] },
      insertGeneration(name, 1, "live", spec),
      ...createGenerationDdl(name, 1, spec),
    ],
    "write",
  );
}

/** Generation numbers only grow while the collection lives (a dropped number is not handed out again). */
export async function insertBuildingGeneration(client: Client, name: string, spec: GenerationSpec): Promise<number> {
  const rs = await client.execute({
    sql: "UPDATE vs_collections SET next_generation = next_generation + 1 WHERE name = ? RETURNING next_generation - 1 AS g",
    args: [name],
  });
  if (rs.rows.length === 0) throw new VectorStoreError("collection_not_found", `no collection ${name}`);
  const generation = Number(rs.rows[0]!.g);
  await client.batch([insertGeneration(name, generation, "building", spec), ...createGenerationDdl(name, generation, spec)], "write");
  return generation;
}

/** The swap itself: one transaction moves the live pointer; the old generation becomes `retired`. */
export async function swapLive(client: Client, name: string, from: number, to: number): Promise<void> {
  await client.batch(
    [
      { sql: "UPDATE vs_generations SET state = 'live' WHERE collection = ? AND generation = ? AND state = 'building'", args: [name, BigInt(to)] },
      { sql: "UPDATE vs_generations SET state = 'retired' WHERE collection = ? AND generation = ?", args: [name, BigInt(from)] },
      { sql: "UPDATE vs_collections SET live_generation = ? WHERE name = ? AND live_generation = ?", args: [BigInt(to), name, BigInt(from)] },
    ],
    "write",
  );
}

export async function deleteGeneration(client: Client, name: string, generation: number): Promise<void> {
  await client.batch(
    [
      { sql: "DELETE FROM vs_generations WHERE collection = ? AND generation = ?", args: [name, BigInt(generation)] },
      { sql: "DELETE FROM vs_checkpoints WHERE collection = ? AND generation = ?", args: [name, BigInt(generation)] },
      ...dropGenerationDdl(name, generation),
    ],
    "write",
  );
}

export async function deleteCollection(client: Client, name: string): Promise<void> {
  const generations = await listGenerations(client, name);
  await client.batch(
    [
      { sql: "DELETE FROM vs_generations WHERE collection = ?", args: [name] },
      { sql: "DELETE FROM vs_checkpoints WHERE collection = ?", args: [name] },
      { sql: "DELETE FROM vs_collections WHERE name = ?", args: [name] },
      ...generations.flatMap((g) => dropGenerationDdl(name, g.generation)),
    ],
    "write",
  );
}

/** Records a generation's newest checkpoint; replaces the previous record. */
export async function recordCheckpoint(client: Client, name: string, generation: number, rec: CheckpointRecord): Promise<void> {
  await client.execute({
    sql: `INSERT OR REPLACE INTO vs_checkpoints (collection, generation, file, seq, count, bytes, crc32) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    args: [name, BigInt(generation), rec.file, BigInt(rec.seq), BigInt(rec.count), BigInt(rec.bytes), BigInt(rec.crc32)],
  });
}

export async function readCheckpointRecord(client: Client, name: string, generation: number): Promise<CheckpointRecord | null> {
  const rs = await client.execute({
    sql: "SELECT file, seq, count, bytes, crc32 FROM vs_checkpoints WHERE collection = ? AND generation = ?",
    args: [name, BigInt(generation)],
  });
  const r = rs.rows[0];
  if (!r) return null;
  return { file: String(r.file), seq: Number(r.seq), count: Number(r.count), bytes: Number(r.bytes), crc32: Number(r.crc32) };
}
