// Regression (issue 14, item 6): a re-backfill that failed for good (the new model's requests
// refused) left the table `error` and every query 409, though the old generation was intact.
// Now (CONTRACT 7, widened) an `error` table with a serving generation keeps answering from it,
// `last_error` says which re-backfill failed, why, and what queries are answered from; only an
// `error` table with nothing ever served is 409 `vector_table_not_ready`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { tasks } from "../../src/scheduler/tables.ts";
import { eventually } from "../harness.ts";
import { json } from "../helpers/organizations.ts";
import { fakeVector } from "../fakes/embeddings/upstream.ts";
import { createWorld, DIMS, enqueueFill, expectedSet, MODEL, newVectorTable, tableRow, taskDone, type World } from "../domains/sync/world.ts";

const ROWS = 300;
const NEW_MODEL = "text-embedding-3-large";
let w: World;
beforeAll(async () => {
  w = await createWorld({ rows: ROWS });
  w.services.scheduler.start();
});
afterAll(() => w.dispose());

const failedTask = (tableId: string, taskType: string) =>
  eventually(async () => {
    const rows = await w.services.database.db.select().from(tasks).where(and(eq(tasks.targetId, tableId), eq(tasks.taskType, taskType)));
    return rows.find((t) => t.status === "failed");
  }, 20_000);

const ask = (id: string, query: string) => w.app.request("POST", `/v1/vector-tables/${id}/query`, { headers: w.org.owner.key, body: { query, limit: 5 } });

function cosine(a: number[], b: number[]): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) (dot += a[i]! * b[i]!), (na += a[i]! * a[i]!), (nb += b[i]! * b[i]!);
  return dot / Math.sqrt(na * nb);
}

/** The top 5 the source implies under the old model (the fake's vectors are deterministic; emb_a has no input kinds). */
async function bruteForce(query: string): Promise<{ id: string; score: number }[]> {
  const q = fakeVector(MODEL, "none", query, DIMS);
  const rows = [...(await expectedSet(w.sql)).entries()].map(([id, r]) => ({ id, score: cosine(q, fakeVector(MODEL, "none", r.text, DIMS)) }));
  return rows.sort((a, b) => b.score - a.score || Number(a.id) - Number(b.id)).slice(0, 5);
}

describe("happy", () => {
  test("PUT a new model → its re-backfill is refused for good → error, last_error says so, queries answer from the old generation", async () => {
    const table = await newVectorTable(w);
    await taskDone(w, (await enqueueFill(w, table)).id);

    // The provider now refuses every request of more than one input: the re-backfill's pages are
    // refused (400, not retryable), while a query's single input still gets its embedding.
    w.fake.set({ maxInputs: 1 });
    try {
      const put = await w.app.request("PUT", `/v1/vector-tables/${table.id}`, { headers: w.org.owner.key, body: { embedding_model: NEW_MODEL } });
      expect(put.status).toBe(200);
      const failed = await failedTask(table.id, "rebackfill");

      const status = await json(await w.app.request("GET", `/v1/vector-tables/${table.id}/sync/status`, { headers: w.org.owner.key }));
      expect(status.sync_status).toBe("error");
      expect(status.last_error).toContain(`re-backfill to model ${NEW_MODEL} failed`);
      expect(status.last_error).toContain(failed.lastError!); // why: the provider's own words
      expect(status.last_error).toContain("at most 1 inputs per request");
      expect(status.last_error).toContain(`answered from the previous vectors (${MODEL}, ${DIMS} dimensions)`);
      expect(status.last_error).not.toContain(w.fake.apiKey);

      const query = "Title: title 7\nbody text of row 7"; // row 7's embedded text: the fake scores it 1
      const res = await ask(table.id, query);
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.model).toBe(MODEL);
      const expected = await bruteForce(query);
      expect(expected[0]!.id).toBe("7");
      expect(body.results.map((r: { id: string }) => r.id)).toEqual(expected.map((e) => e.id));
      body.results.forEach((r: { similarity_score: number }, i: number) => expect(r.similarity_score).toBeCloseTo(expected[i]!.score, 4));
      // The query embedding was asked of the old model, the one the served vectors have.
      expect(w.fake.requests.at(-1)!.decoded).toMatchObject({ model: MODEL, texts: [query] });
    } finally {
      w.fake.set({ maxInputs: null });
    }
  });
});

describe("errors", () => {
  test("a first backfill that failed for good with nothing stored → error, and queries are 409 vector_table_not_ready naming the failure", async () => {
    const table = await newVectorTable(w);
    w.fake.set({ maxInputs: 1 });
    try {
      await enqueueFill(w, table);
      await failedTask(table.id, "backfill");
      const row = (await tableRow(w, table.id))!;
      expect(row.syncStatus).toBe("error");
      expect(await w.services.vectors.count(table.vectorstoreCollection)).toBe(0);
      const res = await ask(table.id, "anything");
      const e = (await json(res)).error;
      expect([res.status, e.code]).toEqual([409, "vector_table_not_ready"]);
      expect(e.message).toContain("at most 1 inputs per request");
    } finally {
      w.fake.set({ maxInputs: null });
    }
  });
});
