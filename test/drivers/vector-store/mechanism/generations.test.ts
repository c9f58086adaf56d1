import { describe, expect, test } from "bun:test";
import type { Client } from "@libsql/client";
import { readdirSync, rmSync } from "node:fs";
import type { GenerationSpec } from "../../../../src/drivers/store-api/index.ts";
import { clusteredVectors, makeWorld, productRows, SPEC } from "../helpers.ts";

// Same dimensions as SPEC so one query vector works against either generation.
const SPEC2: GenerationSpec = { dimensions: 16, numericPk: true, metadata: [{ name: "colour", type: "keyword" }] };

function gen2Rows(n: number) {
  return clusteredVectors(n, 16, 11).map((vector, i) => ({
    pk: String(i),
    textHash: `g2-${i}`,
    metaHash: "m",
    text: `g2 ${i}`,
    metadata: { colour: i % 2 ? "red" : "blue" },
    vector,
  }));
}

/** The generations' tables; the keyword index's FTS5 shadow tables (`…__words_data` and so on) go with it. */
async function tableNames(client: Client): Promise<string[]> {
  const rs = await client.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'vs_vt_g%'");
  return rs.rows.map((r) => String(r.name)).filter((name) => !/__words_/.test(name)).sort();
}

describe("happy", () => {
  test("a new generation is filled aside, swapped in one step, the old one dropped", async () => {
    await using w = await makeWorld();
    const store = await w.open({ index: { threads: 1 } });
    await store.createCollection("vt_g", SPEC);
    await store.upsert("vt_g", productRows(300, SPEC.dimensions));
    await store.checkpoint();
    const g = await store.createGeneration("vt_g", SPEC2);
    expect(g).toBe(2);
    await store.upsert("vt_g", gen2Rows(200), { generation: g });
    expect(await store.count("vt_g")).toBe(300); // the live one still answers
    expect(await store.count("vt_g", undefined, { generation: g })).toBe(200);
    expect(store.generations("vt_g")).toEqual({ live: 1, building: [2] });

    const q1 = productRows(1, SPEC.dimensions)[0]!.vector;
    const q2 = gen2Rows(1)[0]!.vector;
    let stop = false;
    const seen: string[] = [];
    const searcher = (async () => {
      while (!stop) {
        // Local libSQL calls settle as microtasks: give timers a turn or this loop starves them.
        await new Promise((r) => setImmediate(r));
        const live = store.generations("vt_g").live;
        const res = await store.search("vt_g", { vector: live === 1 ? q1 : q2, k: 20, filter: live === 1 ? { category: { neq: "none" } } : { colour: { neq: "none" } } }).catch((e) => e);
        if (res instanceof Error) seen.push(`error ${res.message}`);
        else seen.push([...new Set(res.hits.map((h: { text: string }) => h.text.split(" ")[0]))].join("+"));
      }
    })();
    const burst = Array.from({ length: 40 }, (_, i) => store.search("vt_g", { vector: i % 2 ? q1 : q2, k: 10 }).catch((e) => e));
    await store.swapGeneration("vt_g", g);
    const late = await Promise.all(burst);
    await new Promise((r) => setTimeout(r, 30));
    stop = true;
    await searcher;

    // Each answer came wholly from one generation: "product" (g1) or "g2", never a mix or an error.
    for (const r of late) expect(r instanceof Error ? r.message : "ok").toBe("ok");
    for (const r of late) expect(new Set(r.hits.map((h: { text: string }) => h.text.startsWith("g2"))).size).toBe(1);
    expect(seen.every((s) => s === "product" || s === "g2")).toBe(true);
    expect(seen.at(-1)).toBe("g2");
    expect(store.generations("vt_g")).toEqual({ live: 2, building: [] });
    expect(await tableNames(w.client)).toEqual(["vs_vt_g__g2__docs", "vs_vt_g__g2__gone", "vs_vt_g__g2__rows", "vs_vt_g__g2__words"]);
    expect(readdirSync(w.indexDir).some((f) => f.startsWith("vt_g.g1."))).toBe(false);

    // The swap survives a restart; filters now follow the new schema.
    await store.close();
    const reopened = await w.open();
    await reopened.whenReady("vt_g");
    expect(reopened.generations("vt_g").live).toBe(2);
    const hits = (await reopened.search("vt_g", { vector: q2, k: 5, filter: { colour: "red" } })).hits;
    expect(hits.length).toBe(5);
    expect(hits.every((h) => h.metadata.colour === "red" && h.text.startsWith("g2"))).toBe(true);
    expect(reopened.search("vt_g", { vector: q2, k: 5, filter: { category: "books" } })).rejects.toThrow("unknown filter column");
  });

  test("a building generation can be abandoned; a building generation survives restart", async () => {
    await using w = await makeWorld();
    const store = await w.open();
    await store.createCollection("vt_g", SPEC);
    const a = await store.createGeneration("vt_g", SPEC2);
    await store.upsert("vt_g", gen2Rows(10), { generation: a });
    await store.dropGeneration("vt_g", a);
    const b = await store.createGeneration("vt_g", SPEC2);
    expect(b).toBe(3);
    await store.upsert("vt_g", gen2Rows(10), { generation: b });
    await store.close();
    const reopened = await w.open();
    expect(reopened.generations("vt_g")).toEqual({ live: 1, building: [3] });
    expect(await reopened.count("vt_g", undefined, { generation: 3 })).toBe(10);
    expect(await tableNames(w.client)).toEqual([
      "vs_vt_g__g1__docs", "vs_vt_g__g1__gone", "vs_vt_g__g1__rows", "vs_vt_g__g1__words",
      "vs_vt_g__g3__docs", "vs_vt_g__g3__gone", "vs_vt_g__g3__rows", "vs_vt_g__g3__words",
    ]);
    await reopened.dropCollection("vt_g");
    expect(await tableNames(w.client)).toEqual([]);
    expect(reopened.listCollections()).toEqual([]);
  });
});

describe("errors", () => {
  test("swapping or writing to an unknown generation", async () => {
    await using w = await makeWorld();
    const store = await w.open();
    await store.createCollection("vt_g", SPEC);
    expect(store.swapGeneration("vt_g", 9)).rejects.toMatchObject({ code: "generation_not_found" });
    expect(store.upsert("vt_g", [], { generation: 9 })).rejects.toMatchObject({ code: "generation_not_found" });
  });
});

describe("pins", () => {
  test("every caller waiting for a generation's pins to end is woken, not only the last", async () => {
    const { Generation } = await import("../../../../src/drivers/vector-store/generation.ts");
    const { DEFAULT_INDEX_PARAMS } = await import("../../../../src/drivers/vector-store/options.ts");
    const gen = new Generation("c", 1, SPEC, DEFAULT_INDEX_PARAMS, "/nonexistent", () => {});
    gen.pins.hold();
    gen.pins.hold();
    const woken: string[] = [];
    const waits = ["retire", "drop"].map((who) => gen.pins.drained().then(() => woken.push(who)));
    gen.pins.release();
    await Bun.sleep(0);
    expect(woken).toEqual([]); // one pin still held
    gen.pins.release();
    await Promise.all(waits);
    expect(woken.sort()).toEqual(["drop", "retire"]);
    await gen.pins.drained(); // no pins: at once
  });
});

describe("state", () => {
  test("a restart without its index file answers while it loads and rebuilds; whenReady wakes once it is ready", async () => {
    await using w = await makeWorld();
    const rows = productRows(3000, SPEC.dimensions);
    const first = await w.open({ index: { threads: 1 } });
    await first.createCollection("vt_s", SPEC);
    await first.upsert("vt_s", rows);
    await first.whenReady("vt_s");
    await first.close();
    rmSync(w.indexDir, { recursive: true, force: true });

    const events: string[] = [];
    const store = await w.open({ index: { threads: 1 }, log: (e) => events.push(e) });
    expect(store.status("vt_s")).not.toBe("ready"); // loading in the background
    const { hits } = await store.search("vt_s", { vector: rows[7]!.vector, k: 1 }); // through SQL, or exactly
    expect(hits[0]?.pk).toBe(rows[7]!.pk);
    await store.whenReady("vt_s");
    expect(store.status("vt_s")).toBe("ready");
    expect(events.filter((e) => e.startsWith("vector_store.index_rebuil"))).toEqual(["vector_store.index_rebuild", "vector_store.index_rebuilt"]);
    await store.close();
    expect(store.whenReady("vt_s")).rejects.toMatchObject({ code: "closed" });
  });
});

describe("lifecycle", () => {
  test("moves only along its table; a wait ends at its state, or at closed", async () => {
    const { Lifecycle } = await import("../../../../src/drivers/vector-store/lifecycle.ts");
    const life = new Lifecycle("c/1");
    const woken: string[] = [];
    const ready = life.reached("ready").then(() => woken.push(`ready at ${life.state}`));
    life.to("rebuilding");
    await Bun.sleep(0);
    expect(woken).toEqual([]);
    expect(() => life.to("loading")).toThrow("rebuilding → loading is not a transition");
    life.to("ready");
    await ready;
    expect(woken).toEqual(["ready at ready"]);
    expect(() => life.to("rebuilding")).toThrow("ready → rebuilding");
    // A generation closed while loading: whoever waits for ready is woken, and sees it closed.
    const other = new Lifecycle("c/2");
    const waiting = other.reached("ready").then(() => other.state);
    other.to("closed");
    expect(await waiting).toBe("closed");
    other.to("closed"); // closing twice (a drop, then the store's close) is no move
    expect(() => other.to("ready")).toThrow("closed → ready");
    await other.reached("ready"); // closed: at once
  });
});
