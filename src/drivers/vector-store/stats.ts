// Size figures for one generation: libSQL bytes from dbstat (pages of its tables and indexes),
// memory from the mirror and the index.
import type { Client } from "@libsql/client";
import type { Generation } from "./generation.ts";
import type { CollectionStats } from "./types.ts";

async function sqlBytes(client: Client, gen: Generation): Promise<number> {
  const prefix = `vs_${gen.collection}__g${gen.generation}__`;
  const auto = `sqlite_autoindex_${prefix}`;
  try {
    const rs = await client.execute({
      sql: "SELECT coalesce(sum(pgsize), 0) AS b FROM dbstat WHERE substr(name, 1, ?) = ? OR substr(name, 1, ?) = ?",
      args: [BigInt(prefix.length), prefix, BigInt(auto.length), auto],
    });
    return Number(rs.rows[0]?.b ?? 0);
  } catch {
    // No dbstat (some remote servers): the vectors alone are a fair lower bound.
    return gen.mirror.liveCount * gen.spec.dimensions * 4;
  }
}

export async function collectStats(client: Client, gen: Generation): Promise<CollectionStats> {
  const indexBytes = gen.hnsw.memoryBytes();
  return {
    collection: gen.collection,
    generation: gen.generation,
    status: gen.status,
    rows: gen.mirror.liveCount,
    dimensions: gen.spec.dimensions,
    sqlBytes: await sqlBytes(client, gen),
    memoryBytes: gen.mirror.bytes() + indexBytes,
    compact: !gen.mirror.hasFloats,
    codesKept: gen.mirror.codesKept,
    indexBytes,
    changeSeq: gen.appliedSeq,
    checkpointSeq: gen.checkpoints.seq,
    strays: gen.hnsw.strays.size,
  };
}
