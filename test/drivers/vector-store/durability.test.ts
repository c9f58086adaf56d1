import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { cpSync, readdirSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import type { VectorStore } from "../../../src/drivers/vector-store/index.ts";
import { applyScript } from "./fixtures/script.ts";
import { clusteredVectors, makeWorld, productRows, SPEC } from "./helpers.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const queries = clusteredVectors(8, SPEC.dimensions, 7, 8);
const FILTERS = [undefined, { category: "books" }, { category: "crashed" }, { stock: { gte: 10 } }];
// Small exact cap so both planner paths are exercised on this small data.
const OPTS = { exactCapScale: 0.2, index: { threads: 1 } };

async function answers(store: VectorStore, collection: string) {
  const out: string[][] = [];
  for (const q of queries) {
    for (const filter of FILTERS) {
      const { hits } = await store.search(collection, { vector: q, k: 10, filter });
      out.push(hits.map((h) => JSON.stringify([h.pk, h.score.toFixed(5), h.text, h.metadata])));
    }
  }
  return out;
}

/**
 * The restarted store's answers against a never-crashed store's exact ones. Its HNSW graph was
 * built in another order, so the approximate path may pick other near-ties; but every hit must
 * carry the never-crashed row exactly (pk, score, text, metadata), and the top-10s must agree.
 */
function expectSameAnswers(got: string[][], exact: string[][]): void {
  let agreed = 0;
  let total = 0;
  got.forEach((hits, i) => {
    const want = new Set(exact[i]);
    expect(hits.length).toBe(exact[i]!.length);
    agreed += hits.filter((h) => want.has(h)).length;
    total += exact[i]!.length;
  });
  expect(agreed / total).toBeGreaterThanOrEqual(0.97);
}

describe("crash", () => {
  // The writer kept f32 vectors; a compact restart tops up that checkpoint with rows given as i8 codes.
  test.each([["f32", {}], ["compact", { floatMirrorBytes: 0 }]] as const)("kill -9 between an upsert and a checkpoint: restart (%s mirror) answers as a never-crashed store", async (_, memory) => {
    await using crashed = await makeWorld();
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures/crash-writer.ts"), crashed.dbUrl, crashed.indexDir], { stdout: "pipe", stderr: "inherit" });
    const reader = child.stdout.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("ready\n");
    child.kill("SIGKILL");
    expect(await child.exited).not.toBe(0);
    expect(child.signalCode).toBe("SIGKILL");

    const events: [string, Record<string, unknown>][] = [];
    const restarted = await crashed.open({ ...OPTS, ...memory, log: (e, f) => events.push([e, f]) });
    await restarted.whenReady("vt_crash");
    const loaded = events.find(([e]) => e === "vector_store.index_loaded");
    // From the checkpoint at seq 2: rows 300-599 and the moved row 10, less row 400 deleted since.
    expect(loaded?.[1].replayed).toBe(300);
    expect(events.some(([e]) => e === "vector_store.index_rebuild")).toBe(false);

    await using clean = await makeWorld();
    const reference = await clean.open({ ...OPTS, exactCapScale: 1e9 });
    await applyScript(reference, async () => {});
    expect(await restarted.count("vt_crash")).toBe(596);
    for (const filter of FILTERS) expect(await restarted.count("vt_crash", filter)).toBe(await reference.count("vt_crash", filter));
    expectSameAnswers(await answers(restarted, "vt_crash"), await answers(reference, "vt_crash"));
  }, 20_000);
});

/** Rewrites the description beside an index file to match its (damaged) bytes. */
function describeAsIs(file: string, meta: string): void {
  const bytes = readFileSync(file);
  writeFileSync(meta, JSON.stringify({ ...JSON.parse(readFileSync(meta, "utf8")), bytes: bytes.length, crc32: crc32(bytes) }));
}

type Corruption = { name: string; reason: RegExp; apply: (dir: string, file: string, meta: string) => void };

const CORRUPTIONS: Corruption[] = [
  { name: "index file missing", reason: /missing/, apply: (_, file) => unlinkSync(file) },
  { name: "index file truncated", reason: /bytes, expected/, apply: (_, file) => truncateSync(file, 1000) },
  {
    name: "bytes flipped inside the index",
    reason: /checksum/,
    apply: (_, file) => {
      const buf = readFileSync(file);
      for (let i = 0; i < 64; i++) buf[Math.floor(buf.length / 2) + i] = buf[Math.floor(buf.length / 2) + i]! ^ 0xff;
      writeFileSync(file, buf);
    },
  },
  { name: "description garbled", reason: /unreadable/, apply: (_, __, meta) => writeFileSync(meta, "{not json") },
  {
    name: "bytes flipped, description rewritten to match (size and CRC)",
    reason: /recorded in libSQL|index graph/,
    apply: (_, file, meta) => {
      const buf = readFileSync(file);
      for (let i = 0; i < 64; i++) buf[Math.floor(buf.length / 2) + i] = buf[Math.floor(buf.length / 2) + i]! ^ 0xff;
      writeFileSync(file, buf);
      describeAsIs(file, meta);
    },
  },
  {
    name: "middle zeroed, description rewritten to match",
    reason: /recorded in libSQL|index graph/,
    apply: (_, file, meta) => {
      const buf = readFileSync(file);
      buf.fill(0, Math.floor(buf.length / 2) - 2048, Math.floor(buf.length / 2) + 2048);
      writeFileSync(file, buf);
      describeAsIs(file, meta);
    },
  },
  {
    name: "stale index claiming a newer sequence (count against libSQL)",
    reason: /index holds \d+ vectors, libSQL \d+/,
    apply: (dir, _, meta) => {
      const stale = JSON.parse(readFileSync(join(dir, "stale.json"), "utf8"));
      cpSync(join(dir, "stale.usearch"), join(dir, stale.file));
      const current = JSON.parse(readFileSync(meta, "utf8"));
      writeFileSync(meta, JSON.stringify({ ...stale, seq: current.seq }));
    },
  },
];

describe("corrupt index files", () => {
  test.each(CORRUPTIONS)("$name: detected, rebuilt, same answers", async ({ reason, apply }) => {
    await using w = await makeWorld();
    const rows = productRows(400, SPEC.dimensions, 3);
    const store = await w.open(OPTS);
    await store.createCollection("vt_c", SPEC);
    await store.upsert("vt_c", rows.slice(0, 200));
    await store.checkpoint();
    const [staleFile] = readdirSync(w.indexDir).filter((f) => f.endsWith(".usearch"));
    cpSync(join(w.indexDir, staleFile!), join(w.indexDir, "stale.usearch"));
    cpSync(join(w.indexDir, "vt_c.g1.json"), join(w.indexDir, "stale.json"));
    await store.upsert("vt_c", rows.slice(200));
    await store.close();
    const pristine = await w.open(OPTS);
    await pristine.whenReady("vt_c");
    const expected = await answers(pristine, "vt_c");
    await pristine.close();

    const meta = join(w.indexDir, "vt_c.g1.json");
    const file = join(w.indexDir, JSON.parse(readFileSync(meta, "utf8")).file);
    apply(w.indexDir, file, meta);
    const events: [string, Record<string, unknown>][] = [];
    const reopened = await w.open({ ...OPTS, log: (e, f) => events.push([e, f]) });
    expect(reopened.ready()).toBe(false);
    await reopened.whenReady("vt_c");
    const rebuild = events.find(([e]) => e === "vector_store.index_rebuild");
    expect(String(rebuild?.[1].reason)).toMatch(reason);
    expect(events.some(([e]) => e === "vector_store.index_rebuilt")).toBe(true);
    expectSameAnswers(await answers(reopened, "vt_c"), expected);
    // The rebuilt index was checkpointed: the next start loads it without a rebuild.
    await reopened.close();
    const events2: string[] = [];
    const third = await w.open({ ...OPTS, log: (e) => events2.push(e) });
    await third.whenReady("vt_c");
    expect(events2).toContain("vector_store.index_loaded");
    rmSync(join(w.indexDir, "stale.usearch"));
  });
});
