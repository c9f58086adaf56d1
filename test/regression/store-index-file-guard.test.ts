// Regression (issue 12, items 1 and 8): a start never dies on an index file. usearch trusts the
// file it is handed, and a native abort or segfault cannot be caught, so an index written by a
// bug (deleted slots), damaged with its description rewritten to match (size and CRC), or zeroed
// in the middle took the whole service down on every start, or loaded silently and answered
// differently. Files are now checked in JS (header, graph bounds), against the checkpoint
// recorded in libSQL, and by a self-search sample after loading; a start that died inside
// usearch leaves a marker so the next start rebuilds. Each start runs in a child process.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { Index, MetricKind, ScalarKind } from "usearch";
import { fakeVector } from "../fakes/embeddings/upstream.ts";
import { makeWorld, type World } from "../drivers/vector-store/helpers.ts";
import type { UpsertRow } from "../../src/drivers/store-api/index.ts";
import { probeInChild } from "./fixtures/probe.ts";

setDefaultTimeout(60_000);

const DIMS = 64;
const ROWS = 3000;

function rows(): UpsertRow[] {
  return Array.from({ length: ROWS }, (_, i) => {
    const text = `guarded row ${i + 1}`;
    return { pk: String(i + 1), textHash: `t${i}`, metaHash: "m", text, metadata: {}, vector: Float32Array.from(fakeVector("m", "document", text, DIMS)) };
  });
}

/** A closed store with one checkpointed collection; returns the checkpoint's file and description paths. */
async function checkpointed(w: World): Promise<{ file: string; meta: string }> {
  const store = await w.open();
  await store.createCollection("vt_guard", { dimensions: DIMS, metadata: [], numericPk: true });
  const all = rows();
  for (let i = 0; i < all.length; i += 500) await store.upsert("vt_guard", all.slice(i, i + 500));
  await store.close();
  const meta = join(w.indexDir, "vt_guard.g1.json");
  return { file: join(w.indexDir, JSON.parse(readFileSync(meta, "utf8")).file), meta };
}

/** Rewrites the description beside the file, and libSQL's record when asked, to match its bytes. */
async function describeAsIs(w: World, file: string, meta: string, inLibsql: boolean, count?: number): Promise<void> {
  const bytes = statSync(file).size;
  const crc = crc32(readFileSync(file));
  const old = JSON.parse(readFileSync(meta, "utf8"));
  writeFileSync(meta, JSON.stringify({ ...old, bytes, crc32: crc, count: count ?? old.count }));
  if (!inLibsql) return;
  await w.client.execute({ sql: "UPDATE vs_checkpoints SET bytes = ?, crc32 = ?, count = ?", args: [bytes, crc, count ?? old.count] });
}

function damage(file: string, fill: (buf: Buffer, at: number) => void): void {
  const buf = readFileSync(file);
  fill(buf, Math.floor(buf.length / 2));
  writeFileSync(file, buf);
}

async function expectServedAfterStart(w: World, reason: RegExp | null): Promise<void> {
  const { exitCode, stderr, answer } = await probeInChild(w.dbUrl, w.indexDir);
  expect({ exitCode, aborted: /corrupted|panic|Segmentation|SIGSEGV/.test(stderr) }).toEqual({ exitCode: 0, aborted: false });
  expect(answer?.rows).toBe(ROWS);
  expect(answer?.misses).toEqual([]);
  const rebuilds = answer!.events.filter((e) => e.event === "vector_store.index_rebuild").map((e) => e.reason);
  if (reason) expect(rebuilds).toEqual([expect.stringMatching(reason)]);
  // Whatever happened, the next start loads a good checkpoint without a rebuild.
  const again = await probeInChild(w.dbUrl, w.indexDir);
  expect(again.exitCode).toBe(0);
  expect(again.answer?.events.filter((e) => e.event === "vector_store.index_rebuild")).toEqual([]);
}

describe("errors", () => {
  test("a file with deleted slots (as usearch remove writes them), described to match: refused before usearch reads it", async () => {
    await using w = await makeWorld();
    const { file, meta } = await checkpointed(w);
    const planted = new Index({ dimensions: DIMS, metric: MetricKind.Cos, quantization: ScalarKind.I8, connectivity: 16, expansion_add: 128, expansion_search: 64, multi: false });
    const all = rows();
    planted.add(BigUint64Array.from(all, (_, i) => BigInt(i + 1)), Float32Array.from(all.flatMap((r) => [...r.vector])), 1);
    planted.remove(BigUint64Array.from({ length: 1000 }, (_, i) => BigInt(3 * i + 3)));
    planted.save(file);
    await describeAsIs(w, file, meta, true, planted.size());
    await expectServedAfterStart(w, /deleted slots/);
  });

  test("bytes flipped, description rewritten to match (size and CRC): caught (graph check or the record in libSQL)", async () => {
    await using w = await makeWorld();
    const { file, meta } = await checkpointed(w);
    damage(file, (buf, at) => {
      for (let i = 0; i < 64; i++) buf[at + i] = buf[at + i]! ^ 0xff;
    });
    await describeAsIs(w, file, meta, false);
    await expectServedAfterStart(w, /recorded in libSQL|index graph/);
  });

  test("middle zeroed, description rewritten to match: caught (graph check or the record in libSQL)", async () => {
    await using w = await makeWorld();
    const { file, meta } = await checkpointed(w);
    damage(file, (buf, at) => buf.fill(0, at - 8192, at + 8192));
    await describeAsIs(w, file, meta, false);
    await expectServedAfterStart(w, /recorded in libSQL|index graph/);
  });

  test("middle zeroed, description and libSQL record both rewritten: no crash, every row still found", async () => {
    await using w = await makeWorld();
    const { file, meta } = await checkpointed(w);
    damage(file, (buf, at) => buf.fill(0, at - 8192, at + 8192));
    await describeAsIs(w, file, meta, true);
    await expectServedAfterStart(w, null);
  });

  test("vectors zeroed, description and libSQL record both rewritten: the self-search sample rejects the file", async () => {
    await using w = await makeWorld();
    const { file, meta } = await checkpointed(w);
    damage(file, (buf) => buf.fill(0, 8, 8 + (ROWS * DIMS) / 2)); // the first half of the vector matrix
    await describeAsIs(w, file, meta, true);
    await expectServedAfterStart(w, /sampled rows not found/);
  });

  test("a start that died inside usearch (marker left): the next start rebuilds instead of loading", async () => {
    await using w = await makeWorld();
    await checkpointed(w);
    writeFileSync(join(w.indexDir, "vt_guard.g1.loading"), "");
    await expectServedAfterStart(w, /died while loading/);
  });
});
