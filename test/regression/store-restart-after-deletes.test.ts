// Regression (issue 12, item 1): after deleting every third row of a 3,000-row collection (or
// all of them, or all and then re-inserting some), every later start aborted inside usearch
// (`free(): corrupted unsorted chunks`) until the index files were removed by hand. usearch's
// `remove` leaves deleted slots in the saved file, and its JS `load` then shrinks an internal
// table below the file's slot count and copies past it (hnsw.ts has the arithmetic). The store
// no longer removes from usearch, so its files never hold deleted slots. The start runs in a
// child process: a native abort must fail the test, not kill the runner.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { fakeVector } from "../fakes/embeddings/upstream.ts";
import { makeWorld } from "../drivers/vector-store/helpers.ts";
import type { GenerationSpec, UpsertRow } from "../../src/drivers/store-api/index.ts";
import { probeInChild } from "./fixtures/probe.ts";

setDefaultTimeout(60_000);

function rows(from: number, to: number, dims: number): UpsertRow[] {
  const out: UpsertRow[] = [];
  for (let id = from; id <= to; id++) {
    const text = `row ${id} of the restart table`;
    out.push({ pk: String(id), textHash: `t${id}`, metaHash: "m", text, metadata: {}, vector: Float32Array.from(fakeVector("text-embedding-3-small", "document", text, dims)) });
  }
  return out;
}

const CASES = [
  { name: "every third row deleted", dims: 64, live: 2000, change: (pks: string[]) => ({ del: pks.filter((pk) => Number(pk) % 3 === 0), add: [] as UpsertRow[] }) },
  { name: "every third row deleted", dims: 512, live: 2000, change: (pks: string[]) => ({ del: pks.filter((pk) => Number(pk) % 3 === 0), add: [] as UpsertRow[] }) },
  { name: "truncated", dims: 64, live: 0, change: (pks: string[]) => ({ del: pks, add: [] as UpsertRow[] }) },
  { name: "truncated, then 1,000 rows inserted again", dims: 64, live: 1000, change: (pks: string[]) => ({ del: pks, add: rows(1, 1000, 64) }) },
];

describe("happy", () => {
  test.each(CASES)("3,000 rows of $dims dims, $name, closed: the next start loads and every live row finds itself", async ({ dims, live, change }) => {
    await using w = await makeWorld();
    const spec: GenerationSpec = { dimensions: dims, metadata: [], numericPk: true };
    const store = await w.open();
    await store.createCollection("vt_other", spec);
    await store.upsert("vt_other", rows(1, 200, dims));
    await store.createCollection("vt_restart", spec);
    const all = rows(1, 3000, dims);
    for (let i = 0; i < all.length; i += 500) await store.upsert("vt_restart", all.slice(i, i + 500));
    await store.checkpoint();
    const { del, add } = change(all.map((r) => r.pk));
    for (let i = 0; i < del.length; i += 500) await store.delete("vt_restart", del.slice(i, i + 500));
    if (add.length > 0) await store.upsert("vt_restart", add);
    await store.close();

    for (const attempt of [1, 2]) {
      const { exitCode, stderr, answer } = await probeInChild(w.dbUrl, w.indexDir);
      expect({ attempt, exitCode, aborted: /corrupted|panic|Segmentation/.test(stderr) }).toEqual({ attempt, exitCode: 0, aborted: false });
      expect(answer?.rows).toBe(200 + live);
      expect(answer?.misses).toEqual([]);
      expect(answer?.events.filter((e) => e.event === "vector_store.index_rebuild")).toEqual([]);
    }
  });
});
