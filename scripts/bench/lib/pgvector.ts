// pgvector HNSW baseline on the local PostgreSQL: a throwaway database created and dropped by
// the benchmark. Loading goes through psql's \copy (fastest path); queries through Bun's client.
import { SQL } from "bun";
import { closeSync, openSync, unlinkSync, writeSync } from "node:fs";
import { categoryOf, type Dataset } from "./data.ts";
import { progress } from "./measure.ts";

/**
 * The HNSW build's memory: pgvector builds in memory while the graph fits (1M × 768 at m = 16 is
 * ~3.7 GB) and finishes on disk, many times slower, past it. 24 GiB machine, /dev/shm 24 GiB.
 */
export const MAINTENANCE_WORK_MEM_GB = 6;

const ADMIN_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface PgBaseline {
  search(query: Float32Array, priceLimit: number, k: number): Promise<number[]>;
  /** Top k among rows whose `category` (data.ts categoryOf) is `category`. */
  searchCategory(query: Float32Array, category: string, k: number): Promise<number[]>;
  loadSeconds: number;
  buildSeconds: number;
  bytesPerVector: number;
  close(): Promise<void>;
}

function vectorText(v: Float32Array): string {
  return `[${Array.from(v, (x) => x.toPrecision(7)).join(",")}]`;
}

async function psql(db: string, script: string): Promise<void> {
  const url = ADMIN_URL.replace(/\/[^/]*$/, `/${db}`);
  const proc = Bun.spawn(["psql", url, "-v", "ON_ERROR_STOP=1", "-q", "-c", script], { stdout: "ignore", stderr: "pipe" });
  const err = await new Response(proc.stderr).text();
  if ((await proc.exited) !== 0) throw new Error(`psql: ${err.trim()}`);
}

/** Returns null (and the reason) when pgvector cannot be used here. */
export async function startPgvector(data: Dataset, opts: { m: number; efConstruction: number; efSearch: number }): Promise<PgBaseline | string> {
  const db = `vecsync_bench_${process.pid}`;
  const admin = new SQL(ADMIN_URL);
  try {
    await admin.unsafe(`CREATE DATABASE ${db}`);
  } catch (e) {
    await admin.close();
    return `cannot create a database: ${String(e)}`;
  }
  const drop = async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => {});
    await admin.close();
  };
  try {
    await psql(db, "CREATE EXTENSION vector");
  } catch (e) {
    await drop();
    return `CREATE EXTENSION vector failed: ${String(e)}`;
  }
  const { n, dims } = data;
  const csv = `/tmp/${db}.csv`;
  let t0 = performance.now();
  // Written 10,000 lines at a time: 1M × 768 is ~9 G characters, past a JS string's 2^31.
  const fd = openSync(csv, "w");
  for (let from = 0; from < n; from += 10_000) {
    const lines: string[] = [];
    for (let i = from; i < Math.min(n, from + 10_000); i++) lines.push(`${i},${data.price[i]},${categoryOf(data.price[i]!)},"${vectorText(data.vectors.subarray(i * dims, (i + 1) * dims))}"\n`);
    writeSync(fd, lines.join(""));
  }
  closeSync(fd);
  await psql(db, `CREATE TABLE items (id integer PRIMARY KEY, price double precision NOT NULL, category text NOT NULL, embedding vector(${dims}) NOT NULL)`);
  await psql(db, `\\copy items FROM '${csv}' WITH (FORMAT csv)`);
  unlinkSync(csv);
  await psql(db, "CREATE INDEX ON items (price); CREATE INDEX ON items (category); ANALYZE items");
  const loadSeconds = (performance.now() - t0) / 1000;
  progress(`pgvector: loaded ${n} rows in ${loadSeconds.toFixed(1)} s; building HNSW (m=${opts.m}, ef_construction=${opts.efConstruction})`);
  t0 = performance.now();
  await psql(
    db,
    `SET maintenance_work_mem = '${MAINTENANCE_WORK_MEM_GB}GB'; SET max_parallel_maintenance_workers = 1;
     CREATE INDEX items_hnsw ON items USING hnsw (embedding vector_cosine_ops) WITH (m = ${opts.m}, ef_construction = ${opts.efConstruction})`,
  );
  const buildSeconds = (performance.now() - t0) / 1000;
  // Per-database settings reach every pooled connection; iterative scans (0.8) keep filtered
  // HNSW queries from coming back short.
  await admin.unsafe(`ALTER DATABASE ${db} SET hnsw.ef_search = ${opts.efSearch}`);
  await admin.unsafe(`ALTER DATABASE ${db} SET hnsw.iterative_scan = relaxed_order`);
  const sql = new SQL(ADMIN_URL.replace(/\/[^/]*$/, `/${db}`), { max: 1 });
  const [size] = await sql`SELECT pg_total_relation_size('items') AS b`;
  return {
    loadSeconds,
    buildSeconds,
    bytesPerVector: Number(size.b) / n,
    async search(query, priceLimit, k) {
      const rows = await sql.unsafe(
        priceLimit >= 100
          ? `SELECT id FROM items ORDER BY embedding <=> $1::vector LIMIT ${k}`
          : `SELECT id FROM items WHERE price < $2 ORDER BY embedding <=> $1::vector LIMIT ${k}`,
        priceLimit >= 100 ? [vectorText(query)] : [vectorText(query), priceLimit],
      );
      return rows.map((r: { id: number }) => Number(r.id));
    },
    async searchCategory(query, category, k) {
      const rows = await sql.unsafe(`SELECT id FROM items WHERE category = $2 ORDER BY embedding <=> $1::vector LIMIT ${k}`, [vectorText(query), category]);
      return rows.map((r: { id: number }) => Number(r.id));
    },
    async close() {
      await sql.close();
      await drop();
    },
  };
}
