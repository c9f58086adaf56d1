// The query half of `bun run bench platform`: N × D clustered vectors (lib/data.ts) written through
// vecsync's pgvector store into a platform table, then, per filter selectivity (`price < s`),
// the same queries three ways in the same run on the same table:
//   vecsync    TableStore.pin() + search(): what the query service runs after embedding (the
//              advisory-locked transaction, the generation read, Postgres's estimate, the tie check);
//   raw same   the very statement vecsync's search runs (ANN with the same ef_search, or exact, as
//              vecsync plans it from the same estimate), sent alone on a plain connection with
//              the settings made once for the session: vecsync's overhead is the ratio of the two;
//   raw ANN    the query a user would write by hand, `WHERE price < s ORDER BY embedding <=> q
//              LIMIT 10`, ef_search 200 and iterative scan: for context.
// Recall@10 of each against the exact top-10 (brute force over the dataset).
import postgres from "postgres";
import { connectPgvectorStore } from "../../../src/drivers/platform/pgvector.ts";
import { platformVectorRef } from "../../../src/drivers/platform/pgvector-schema.ts";
import { annLimit, EF_MIN, MAX_SCAN_TUPLES, planSearch, readEstimate } from "../../../src/drivers/platform/pgvector-search.ts";
import type { PostgresCredentials } from "../../../src/drivers/sources/postgres-connect.ts";
import { platformTableStore } from "../../../src/domains/vector-tables/storage.ts";
import { groundTruth, makeDataset, recallAt, type Dataset } from "./data.ts";
import { fmt, percentile, progress, type Sample } from "./measure.ts";

const K = 10;

export type QueryRow = { engine: string; selectivity: number; sample: Sample; paths?: string };
export type QueryReport = { rows: QueryRow[]; loadSeconds: number; indexSeconds: number; bytesPerVector: number };

const vectorText = (v: Float32Array) => `[${v.join(",")}]`;

export async function queryPhase(credentials: PostgresCredentials, url: string, opts: { rows: number; dims: number; queries: number; selectivities: number[] }): Promise<QueryReport> {
  const { rows: n, dims, queries, selectivities } = opts;
  progress(`query phase: dataset ${n} × ${dims}, ${queries} queries`);
  const data = makeDataset(n, dims, queries, 42);
  const truth = new Map(selectivities.map((s) => [s, groundTruth(data, s, K, 2)]));

  // One connection, as the raw side has: two would alternate between two backends on two cores.
  const pg = connectPgvectorStore(credentials, { maxConnections: 1 });
  const ref = platformVectorRef("bench000query", "items");
  const store = platformTableStore(pg, ref);
  const spec = { dimensions: dims, numericPk: true, metadata: [{ name: "price", type: "float" as const }], primaryKey: { name: "id", type: "integer" } };
  await store.create(spec);
  // Filled as a re-backfill fills: a building generation without its HNSW index, which the swap
  // builds in one go (faster than growing the graph row by row).
  let t0 = performance.now();
  const g = await store.createGeneration(spec);
  for (let start = 0; start < n; start += 1000) {
    const batch = [];
    for (let i = start; i < Math.min(n, start + 1000); i++) {
      batch.push({ pk: String(i), textHash: "t", metaHash: "m", text: `doc ${i}`, metadata: { price: data.price[i]! }, vector: data.vectors.subarray(i * dims, (i + 1) * dims) });
    }
    await store.upsert(batch, { generation: g });
    if ((start / 1000) % 20 === 0) progress(`query phase: ${start + batch.length} rows written`);
  }
  const loadSeconds = (performance.now() - t0) / 1000;
  t0 = performance.now();
  await store.swapGeneration(g);
  const indexSeconds = (performance.now() - t0) / 1000;
  progress(`query phase: loaded in ${loadSeconds.toFixed(1)} s, HNSW built at the swap in ${indexSeconds.toFixed(1)} s`);

  const raw = postgres(url, { max: 1, onnotice: () => {}, prepare: false });
  const table = `vecsync."${ref.split(".")[1]}"`;
  await raw.unsafe(`ANALYZE ${table}`);
  const [size] = await raw.unsafe(`SELECT pg_total_relation_size('${table}') AS b`);
  // Session settings, made before each selectivity's queries: the hand-written query's best case.
  const rawAnn = postgres(url, { max: 1, onnotice: () => {}, prepare: false });
  const settings = (sql: postgres.Sql, ef: number) => sql.unsafe(`SET hnsw.ef_search = ${ef}; SET hnsw.iterative_scan = relaxed_order; SET hnsw.max_scan_tuples = ${MAX_SCAN_TUPLES}`);
  await settings(rawAnn, EF_MIN);
  const vec = `$1::text::vector(${dims})`;

  const out: QueryRow[] = [];
  for (const s of selectivities) {
    const filter = s >= 100 ? undefined : { price: { lt: s } };
    const where = s >= 100 ? "" : `WHERE price < ${s}`;
    const paths = new Map<string, number>();
    const explained = s >= 100 ? null : await raw.unsafe(`EXPLAIN (FORMAT JSON) SELECT 1 FROM ${table} ${where}; SELECT reltuples::float8 AS total FROM pg_class WHERE oid = '${table}'::regclass`).simple();
    const plan = planSearch(K, explained ? readEstimate(explained[0] as never, explained[1] as never) : null, true);
    await settings(raw, plan.kind === "ann" ? plan.ef : EF_MIN);
    const engines: Record<string, (i: number) => Promise<number[]>> = {
      vecsync: async (i) => {
        const pin = await store.pin();
        const res = await pin.search({ vector: data.queries[i]!, k: K, filter });
        pin.release();
        paths.set(res.path, (paths.get(res.path) ?? 0) + 1);
        return res.hits.map((h) => Number(h.pk));
      },
      "raw same SQL": async (i) => {
        const select = `SELECT id, embedded_text, price, embedding <=> ${vec} AS distance FROM ${table} ${where}`;
        const statement = plan.kind === "ann" ? `${select} ORDER BY distance LIMIT ${annLimit(K)}` : `SELECT * FROM (${select} OFFSET 0) AS scored ORDER BY distance LIMIT ${K + 1}`;
        const rows = await raw.unsafe(statement, [vectorText(data.queries[i]!)]);
        return rows.map((r) => ({ id: Number(r.id), distance: Number(r.distance) })).sort((a, b) => a.distance - b.distance || a.id - b.id).slice(0, K).map((r) => r.id);
      },
      "raw ANN": async (i) => {
        const rows = await rawAnn.unsafe(`SELECT id FROM ${table} ${where} ORDER BY embedding <=> ${vec} LIMIT ${K}`, [vectorText(data.queries[i]!)]);
        return rows.map((r) => Number(r.id));
      },
    };
    // Interleaved, query by query, in rotating order: the machine's other load falls on all three alike.
    const samples = await interleaved(queries, engines, (i, ids) => recallAt(ids, truth.get(s)![i]!));
    for (const [engine, sample] of Object.entries(samples)) out.push({ engine, selectivity: s, sample, ...(engine === "vecsync" ? { paths: [...paths].map(([p, c]) => `${p}:${c}`).join(" ") } : {}) });
    const v = samples.vecsync!, same = samples["raw same SQL"]!, ann = samples["raw ANN"]!;
    progress(`${s}%: vecsync p50 ${fmt(v.p50, 3)} ms recall ${fmt(v.recall, 3)} (${out.at(-3)!.paths}); same SQL ${fmt(same.p50, 3)} ms; raw ANN ${fmt(ann.p50, 3)} ms recall ${fmt(ann.recall, 3)}`);
  }
  await raw.end({ timeout: 5 });
  await rawAnn.end({ timeout: 5 });
  await pg.close();
  return { rows: out, loadSeconds, indexSeconds, bytesPerVector: Number(size!.b) / n };
}

/**
 * Each engine on every query, the order rotating per query, each query first run once by every
 * engine untimed: the table and index outgrow shared_buffers, and whichever engine ran a query
 * first would otherwise pay for the pages the next one finds warm.
 */
async function interleaved(count: number, engines: Record<string, (i: number) => Promise<number[]>>, recall: (i: number, ids: number[]) => number): Promise<Record<string, Sample>> {
  const names = Object.keys(engines);
  const times = new Map(names.map((n) => [n, [] as number[]]));
  const recalls = new Map(names.map((n) => [n, 0]));
  for (let i = 0; i < Math.min(10, count); i++) for (const n of names) await engines[n]!(i);
  for (let i = 0; i < count; i++) {
    for (const n of names) await engines[n]!(i);
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length]!;
      const t0 = performance.now();
      const ids = await engines[name]!(i);
      times.get(name)!.push(performance.now() - t0);
      recalls.set(name, recalls.get(name)! + recall(i, ids));
    }
  }
  const out: Record<string, Sample> = {};
  for (const n of names) {
    const ts = times.get(n)!.sort((a, b) => a - b);
    out[n] = { p50: percentile(ts, 50), p99: percentile(ts, 99), qps: (count / ts.reduce((a, b) => a + b, 0)) * 1000, recall: recalls.get(n)! / count };
  }
  return out;
}

export type { Dataset };
