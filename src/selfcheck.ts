// `vecsync version --check`: opens every embedded engine once and reports its version, so a
// binary copied to a bare machine proves its native parts load (issue: one binary); runs a write
// batch on the database's write thread, an entry point of its own in the binary; and embeds a
// sentence with the offline semantic model, which the binary carries too.
import { createClient } from "@libsql/client";
import { DuckDBInstance } from "@duckdb/node-api";
import { exactSearch, type Matches, MetricKind } from "usearch";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "./db/client.ts";
import { THREAD_MIN_BYTES, WRITES_CACHED } from "./db/fast-writes.ts";
import { WRITE_WORKER_ENTRY } from "./db/write-protocol.ts";
import { createEmbeddingProvider } from "./drivers/embeddings/index.ts";
import { SEMANTIC_MODEL, SEMANTIC_VERSION } from "./drivers/embeddings/local-semantic/index.ts";
import { graphAddon, openGraph, usearchVersion } from "./drivers/vector-store/index.ts";

export type EngineReport = { engine: string; ok: boolean; version?: string; error?: string };

async function check(engine: string, fn: () => Promise<string> | string): Promise<EngineReport> {
  try {
    return { engine, ok: true, version: await fn() };
  } catch (err) {
    return { engine, ok: false, error: (err as Error).message };
  }
}

export async function selfCheck(): Promise<EngineReport[]> {
  const dir = mkdtempSync(join(tmpdir(), "vecsync-check-"));
  try {
    return [
      await check("libsql", async () => {
        const client = createClient({ url: `file:${join(dir, "check.db")}` });
        const row = (await client.execute("SELECT sqlite_version() AS v")).rows[0];
        client.close();
        return String(row?.v);
      }),
      await check("usearch", () => {
        // The package's exact scans (the store's exact path); its graphs are vecsync's binding's.
        const hit = exactSearch(new Float32Array([0, 1, 0, 1, 0, 0]), new Float32Array([1, 0, 0]), 3, 1, MetricKind.Cos, 1) as Matches;
        if (hit.keys[0] !== 1n) throw new Error("exact search did not find the nearest vector");
        return usearchVersion();
      }),
      await check("graph", () => {
        // vecsync's own usearch binding (native/README.md): every graph runs on it, and the
        // service does not start without it (VectorStore.open); the error says why.
        const graph = openGraph(3, { connectivity: 8, expansionAdd: 16, threads: 1 }, 16);
        graph.add(BigUint64Array.of(1n), Int8Array.of(127, 0, 0), 1);
        if (graph.search(Int8Array.of(127, 0, 0), 1, 1)[0][0] !== 1n) throw new Error("search did not find the vector it was given");
        return graphAddon().usearchVersion;
      }),
      await check("write-thread", async () => {
        // A batch this large runs on the thread (db/fast-writes.ts); a thread that does not start
        // hands it to the client, which prepares nothing the write path counts.
        const database = await openDatabase(`file:${join(dir, "thread.db")}`);
        try {
          await database.client.execute("CREATE TABLE t (b BLOB)");
          const [, version] = await database.client.batch(
            [{ sql: "INSERT INTO t (b) VALUES (?)", args: [new Uint8Array(THREAD_MIN_BYTES)] }, "SELECT sqlite_version() AS v"],
            "write",
          );
          const prepared = (database.client as unknown as Record<symbol, number>)[WRITES_CACHED];
          if (!prepared) throw new Error(`the write batch did not run on the write thread (${WRITE_WORKER_ENTRY})`);
          return String(version!.rows[0]?.v);
        } finally {
          database.close();
        }
      }),
      await check("duckdb", async () => {
        const instance = await DuckDBInstance.create(":memory:");
        const conn = await instance.connect();
        const rows = (await conn.runAndReadAll("SELECT version() AS v")).getRows();
        conn.closeSync();
        return String(rows[0]?.[0]);
      }),
      await check(SEMANTIC_MODEL, async () => {
        const local = createEmbeddingProvider({ provider: "local" });
        const [v] = await local.embed(["vecsync checks its offline model"], { model: SEMANTIC_MODEL, dimensions: 512, kind: "query" });
        const norm = v!.reduce((n, x) => n + x * x, 0);
        if (v!.length !== 512 || Math.abs(norm - 1) > 1e-3) throw new Error(`the model answered ${v!.length} values of norm ${norm.toFixed(3)}, not a 512-value unit vector`);
        return SEMANTIC_VERSION;
      }),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
