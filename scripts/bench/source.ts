// `bun run bench source [--rows N]`: the Postgres source driver on a table of N rows (default
// 1,000,000) with three text columns, each figure beside a plain `COPY (SELECT …) TO STDOUT` of
// the same columns in the same run: keyset scan rows/s, hash pass rows/s (hashes only over the
// wire), CDC events/s and apply latency (source commit → batch handed to the consumer).
// Uses VECSYNC_BENCH_PG_URL (default postgres://postgres@127.0.0.1:5432/postgres); creates and
// drops its own database. Every phase stops at a deadline, so the whole run stays bounded.
import postgres from "postgres";
import { createPostgresSource } from "../../src/drivers/sources/postgres.ts";
import { positionOnly, type Key, type SourceConnector } from "../../src/drivers/sources/types.ts";

const ADMIN_URL = process.env.VECSYNC_BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const rowsArg = process.argv.indexOf("--rows");
const ROWS = rowsArg > 0 ? Number(process.argv[rowsArg + 1]) : 1_000_000;
const PHASE_LIMIT_MS = 60_000;
const PAGE = 10_000;

const rate = (n: number, ms: number) => Math.round((n * 1000) / ms).toLocaleString("en-US");
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

/**
 * Streams a COPY to nowhere, counting rows (lines); the floor any reader pays. A connection of
 * its own, used once: postgres.js 3.4 can leave a connection's socket paused after a COPY that
 * hit backpressure, and the next query on it then never answers.
 */
async function copyBaseline(url: string, select: string): Promise<{ rows: number; ms: number }> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  await sql`SELECT 1`;
  const started = performance.now();
  const stream = await sql.unsafe(`COPY (${select}) TO STDOUT`).readable();
  let rows = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++;
  }
  const ms = performance.now() - started;
  await sql.end({ timeout: 0 });
  return { rows, ms };
}

async function pages(read: (after: Key | null) => Promise<{ key: Key }[]>): Promise<{ rows: number; ms: number }> {
  const started = performance.now();
  let after: Key | null = null;
  let rows = 0;
  while (performance.now() - started < PHASE_LIMIT_MS) {
    const page = await read(after);
    if (page.length === 0) break;
    rows += page.length;
    after = page.at(-1)!.key;
  }
  return { rows, ms: performance.now() - started };
}

/** Writers commit `txnRows`-row updates for `durationMs`, paced to `txnPerSec` (0 = flat out). */
async function cdcPhase(source: SourceConnector, sql: postgres.Sql, opts: { txnRows: number; txnPerSec: number; durationMs: number }) {
  const target = { stream: `bench_${crypto.randomUUID().slice(0, 8)}`, table: "bench", pk: ["id"] };
  const { checkpoint } = await source.prepareCdc(target);
  const stream = await source.changes(target, checkpoint);
  const latencies: number[] = [];
  let events = 0;
  let written = 0;
  const consumer = (async () => {
    for await (const batch of stream) {
      if (positionOnly(batch)) {
        await stream.ack(batch.checkpoint);
        continue;
      }
      latencies.push(Date.now() - batch.committedAt.getTime());
      events += batch.keys.length;
      await stream.ack(batch.checkpoint);
    }
  })();
  const started = performance.now();
  let txn = 0;
  while (performance.now() - started < opts.durationMs) {
    const first = ((txn * opts.txnRows) % (ROWS - opts.txnRows)) + 1;
    await sql`UPDATE bench SET tags = tags || '.' WHERE id >= ${first} AND id < ${first + opts.txnRows}`;
    written += opts.txnRows;
    txn++;
    if (opts.txnPerSec > 0) {
      const due = started + (txn * 1000) / opts.txnPerSec;
      if (due > performance.now()) await Bun.sleep(due - performance.now());
    }
  }
  const deadline = performance.now() + PHASE_LIMIT_MS;
  while (events < written && performance.now() < deadline) await Bun.sleep(1);
  const ms = performance.now() - started;
  await stream.close();
  await consumer;
  await source.teardownCdc(target);
  latencies.sort((a, b) => a - b);
  return { events, written, ms, p50: pct(latencies, 50), p99: pct(latencies, 99) };
}

const database = `vecsync_bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE DATABASE ${database}`);
const url = new URL(ADMIN_URL);
url.pathname = `/${database}`;
const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
const source = createPostgresSource({
  host: url.hostname,
  port: Number(url.port || 5432),
  database,
  user: decodeURIComponent(url.username),
  password: decodeURIComponent(url.password),
});
try {
  let t = performance.now();
  await sql.unsafe(`CREATE TABLE bench (id int PRIMARY KEY, title text, body text, tags text);
    INSERT INTO bench SELECT g, 'title ' || g, repeat(md5(g::text), 4), 'tag' || (g % 100) FROM generate_series(1, ${ROWS}) g`);
  await sql.unsafe("VACUUM ANALYZE bench");
  console.log(`source bench: ${ROWS.toLocaleString("en-US")} rows (id + 3 text columns, ~190 bytes/row), generated in ${Math.round(performance.now() - t)} ms`);

  const copyRows = await copyBaseline(url.toString(), "SELECT id, title, body, tags FROM bench ORDER BY id");
  const scan = await pages((afterPk) => source.scan({ table: "bench", pk: ["id"], columns: ["title", "body", "tags"], afterPk, limit: PAGE }));
  console.log(`keyset scan      ${rate(scan.rows, scan.ms).padStart(10)} rows/s  (${scan.rows} rows, pages of ${PAGE})   COPY baseline ${rate(copyRows.rows, copyRows.ms)} rows/s`);

  const hashSelect = "SELECT id, md5(row(title, body)::text), md5(row(tags)::text) FROM bench ORDER BY id";
  const copyHashes = await copyBaseline(url.toString(), hashSelect);
  const hashes = await pages((afterPk) => source.hashes({ table: "bench", pk: ["id"], textColumns: ["title", "body"], metaColumns: ["tags"], afterPk, limit: PAGE }));
  console.log(`hash pass        ${rate(hashes.rows, hashes.ms).padStart(10)} rows/s  (${hashes.rows} rows)   COPY of the same hashes ${rate(copyHashes.rows, copyHashes.ms)} rows/s`);

  const burst = await cdcPhase(source, sql, { txnRows: 1000, txnPerSec: 0, durationMs: 10_000 });
  console.log(`cdc burst        ${rate(burst.events, burst.ms).padStart(10)} events/s (${burst.events}/${burst.written} keys, 1000-row txns flat out) latency p50 ${burst.p50} ms p99 ${burst.p99} ms   COPY baseline ${rate(copyRows.rows, copyRows.ms)} rows/s`);
  const paced = await cdcPhase(source, sql, { txnRows: 10, txnPerSec: 200, durationMs: 10_000 });
  console.log(`cdc steady       ${rate(paced.events, paced.ms).padStart(10)} events/s (${paced.events}/${paced.written} keys, 200 txn/s of 10 rows) latency p50 ${paced.p50} ms p99 ${paced.p99} ms`);
} finally {
  await cleanup();
}

/** Drops the database, and first any slot left in it (a slot blocks DROP DATABASE). */
async function cleanup() {
  await source.close().catch(() => {});
  await sql.end({ timeout: 0 }).catch(() => {});
  await admin`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = ${database}`.catch(() => {});
  await admin.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end({ timeout: 5 });
}
