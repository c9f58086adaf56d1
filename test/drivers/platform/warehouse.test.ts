// The warehouse platform store against the DuckDB-backed warehouse test server, through the real
// snowflake-sdk: what only the warehouse has (names and DDL, the key under its source type, SWAP
// WITH, the in-process ordering of a swap and the searches, leftovers of a broken swap, the
// warehouse's own errors). The shared contract runs it as a subject (contract.test.ts); more of
// its row behaviours are in warehouse-store.test.ts.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { WarehouseVectorStore, warehouseVectorRef } from "../../../src/drivers/platform/warehouse.ts";
import { VectorStoreError, type GenerationSpec } from "../../../src/drivers/store-api/index.ts";
import { PlatformSetupError } from "../../../src/drivers/platform/types.ts";
import { DriverError } from "../../../src/shared/errors.ts";
import type { FakeWarehouse } from "../../fakes/warehouse/server.ts";
import { productRows, SPEC } from "../vector-store/helpers.ts";
import { warehouseWorld } from "./warehouse-world.ts";

// Starts a server and a DuckDB per world: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const columnsOf = async (fake: FakeWarehouse, table: string) =>
  (await fake.engine.query(`SELECT COLUMN_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = 'VECSYNC' AND TABLE_NAME = '${table}' ORDER BY ORDINAL_POSITION`)).rows;

describe("warehouse: happy", () => {
  test("the ref is <DB>.VECSYNC.VT_<ID8>_<NAME>; the table keeps metadata under its own names, the vector as VECTOR", async () => {
    expect(warehouseVectorRef("ANALYTICS", "abcdefgh12345678", "My Products!")).toBe("ANALYTICS.VECSYNC.VT_ABCDEFGH_MY_PRODUCTS_");
    await using world = await warehouseWorld();
    const ref = world.store.refFor("ddl00001xyz", "items");
    expect(ref).toBe(`${world.fake.database}.VECSYNC.VT_DDL00001_ITEMS`);
    await world.store.ensureTable(ref, SPEC);
    expect(await columnsOf(world.fake, "VT_DDL00001_ITEMS")).toEqual([
      ["PK", "TEXT"],
      ["EMBEDDED_TEXT", "TEXT"],
      ["category", "TEXT"],
      ["price", "FLOAT"],
      ["stock", "NUMBER"],
      ["active", "BOOLEAN"],
      ["EMBEDDING", "VECTOR"],
      ["VECSYNC_TEXT_HASH", "TEXT"],
      ["VECSYNC_META_HASH", "TEXT"],
    ]);
    expect(await world.store.generations(ref)).toEqual({ live: 1, building: [], spec: SPEC });
    const sent = world.fake.requests.map((r) => String((r.body as { sqlText?: string } | null)?.sqlText ?? ""));
    expect(sent.some((s) => /^CREATE SCHEMA IF NOT EXISTS "VECSYNC_TEST_DB"\."VECSYNC"$/.test(s))).toBe(true);
    expect(sent.some((s) => s.includes('"EMBEDDING" VECTOR(FLOAT, 16) NOT NULL') && /\) COMMENT = '\{/.test(s))).toBe(true);
    await world.store.upsert(ref, productRows(1, 16));
    const sentNow = world.fake.requests.map((r) => String((r.body as { sqlText?: string } | null)?.sqlText ?? ""));
    expect(sentNow.some((s) => s.startsWith(`MERGE INTO "VECSYNC_TEST_DB"."VECSYNC"."VT_DDL00001_ITEMS" t USING`))).toBe(true);
  });

  test("names the table would take itself, or that differ only in case, are problems before anything is made", async () => {
    await using world = await warehouseWorld();
    const spec: GenerationSpec = { ...SPEC, metadata: [...SPEC.metadata, { name: "embedding", type: "keyword" }, { name: "PRICE", type: "float" }, { name: "ID", type: "integer" }] };
    const keyed = { ...spec, primaryKey: { name: "ID", type: "NUMBER(38,0)" } };
    expect(world.store.specProblems(keyed)).toEqual([
      'the metadata column "embedding" has a name the platform table uses itself (EMBEDDED_TEXT, EMBEDDING, VECSYNC_TEXT_HASH, VECSYNC_META_HASH)',
      'the metadata column "PRICE" differs from another only in case, which the warehouse may not tell apart',
      'the metadata column "ID" is the primary key, which the platform table already holds under that name',
    ]);
    expect(world.store.specProblems({ ...SPEC, primaryKey: { name: "Embedded_Text", type: "VARCHAR" } })).toHaveLength(1);
    expect(world.store.specProblems(SPEC)).toEqual([]);
    await expect(world.store.ensureTable(world.ref("names001", "x"), keyed)).rejects.toMatchObject({ code: "invalid_name" });
    expect(await world.store.hasTable(world.ref("names001", "x"))).toBe(false);
  });

  test("with the source's key column, the key keeps its name and type and pages in its own (numeric) order", async () => {
    await using world = await warehouseWorld();
    await world.fake.exec("CREATE TABLE items (item_id NUMBER(10,0) PRIMARY KEY, title VARCHAR)");
    const pk = await world.store.keyColumn({ schema: "PUBLIC", name: "ITEMS" }, "ITEM_ID");
    expect(pk).toEqual({ name: "ITEM_ID", type: "NUMBER(10,0)" });
    const ref = world.ref("keys0001", "items");
    await world.store.ensureTable(ref, { ...SPEC, primaryKey: pk });
    await world.store.ensureTable(ref, { ...SPEC, primaryKey: { name: "ITEM_ID", type: "number(10, 0)" } });
    await expect(world.store.ensureTable(ref, SPEC)).rejects.toMatchObject({ code: "collection_exists" });
    expect((await columnsOf(world.fake, "VT_KEYS0001_ITEMS"))[0]).toEqual(["ITEM_ID", "NUMBER"]);
    await world.store.upsert(ref, productRows(12, 16));
    expect((await world.store.hashes(ref, { limit: 4 })).map((h) => h.pk)).toEqual(["0", "1", "2", "3"]);
    expect((await world.store.hashes(ref, { afterPk: "9", limit: 5 })).map((h) => h.pk)).toEqual(["10", "11"]);
    expect(await world.store.delete(ref, ["10", "11"])).toBe(2);
    expect((await world.store.search(ref, { vector: productRows(12, 16)[3]!.vector, k: 1 })).hits[0]!.pk).toBe("3");
    // A new generation keeps the live key column unless told otherwise.
    const g = await world.store.createGeneration(ref, SPEC);
    expect((await columnsOf(world.fake, `VT_KEYS0001_ITEMS__G${g}`))[0]).toEqual(["ITEM_ID", "NUMBER"]);
    // A type that would not give the same key text back (a bare NUMBER: its scale unknown) is kept as text.
    const loose = world.ref("keys0002", "items");
    await world.store.ensureTable(loose, { ...SPEC, primaryKey: { name: "ITEM_ID", type: "NUMBER" } });
    await world.store.upsert(loose, [{ ...productRows(1, 16)[0]!, pk: "2.50" }]);
    expect(await world.store.hashes(loose)).toEqual([{ pk: "2.50", textHash: "t0", metaHash: "m0" }]);
    expect((await columnsOf(world.fake, "VT_KEYS0002_ITEMS"))[0]).toEqual(["ITEM_ID", "TEXT"]);
  });

  test("the swap is one ALTER TABLE … SWAP WITH, and a swap waits for the searches in flight", async () => {
    await using world = await warehouseWorld();
    const { store } = world;
    const ref = world.ref("swap0001", "items");
    await store.ensureTable(ref, SPEC);
    await store.upsert(ref, productRows(20, 16).map((r) => ({ ...r, text: `g1 ${r.pk}` })));
    const g = await store.createGeneration(ref, SPEC);
    await store.upsert(ref, productRows(20, 16).map((r) => ({ ...r, text: `g2 ${r.pk}` })), { generation: g });
    const order: string[] = [];
    const searches = Array.from({ length: 4 }, () => store.search(ref, { vector: new Float32Array(16).fill(0.2), k: 5 }).then((r) => (order.push("search"), r)));
    const swap = store.swapGeneration(ref, g).then(() => order.push("swap"));
    const after = store.search(ref, { vector: new Float32Array(16).fill(0.2), k: 5 });
    const [early, late] = [await Promise.all(searches), await after];
    await swap;
    expect(order).toEqual(["search", "search", "search", "search", "swap"]);
    for (const r of early) expect(new Set(r.hits.map((h) => h.text.split(" ")[0]))).toEqual(new Set(["g1"]));
    expect(new Set(late.hits.map((h) => h.text.split(" ")[0]))).toEqual(new Set(["g2"]));
    const sent = world.fake.requests.map((r) => String((r.body as { sqlText?: string } | null)?.sqlText ?? ""));
    expect(sent.filter((s) => s.includes(" SWAP WITH "))).toEqual([
      `ALTER TABLE "VECSYNC_TEST_DB"."VECSYNC"."VT_SWAP0001_ITEMS" SWAP WITH "VECSYNC_TEST_DB"."VECSYNC"."VT_SWAP0001_ITEMS__G2"`,
    ]);
    // A search pinned to the generation it embedded its query for fails once that is no longer live.
    await expect(store.search(ref, { vector: new Float32Array(16).fill(0.2), k: 5 }, { generation: 1 })).rejects.toMatchObject({ code: "generation_not_found" });
    expect((await store.search(ref, { vector: new Float32Array(16).fill(0.2), k: 5 }, { generation: 2 })).hits.length).toBe(5);
  });

  test("a swap whose DROP never ran leaves a table the next DDL removes; tables not ours are never touched", async () => {
    await using world = await warehouseWorld();
    const { store, fake } = world;
    const ref = world.ref("left0001", "items");
    await store.ensureTable(ref, SPEC);
    const g = await store.createGeneration(ref, SPEC);
    // What a crash between SWAP and DROP leaves: generation 1 under the building name.
    await fake.exec(`ALTER TABLE "VECSYNC_TEST_DB"."VECSYNC"."VT_LEFT0001_ITEMS" SWAP WITH "VECSYNC_TEST_DB"."VECSYNC"."VT_LEFT0001_ITEMS__G2"`);
    await fake.exec(`CREATE TABLE "VECSYNC_TEST_DB"."VECSYNC"."VT_LEFT0001_ITEMS__G9" (x VARCHAR)`);
    expect(await store.generations(ref)).toMatchObject({ live: g, building: [] });
    expect(await store.createGeneration(ref, SPEC)).toBe(10);
    const tables = (await fake.engine.query("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'VECSYNC' ORDER BY TABLE_NAME")).rows.map((r) => r[0]);
    expect(tables).toEqual(["VT_LEFT0001_ITEMS", "VT_LEFT0001_ITEMS__G10", "VT_LEFT0001_ITEMS__G9"]);
    await store.dropTable(ref);
    expect((await fake.engine.query("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'VECSYNC'")).rows).toEqual([["VT_LEFT0001_ITEMS__G9"]]);
  });
});

describe("warehouse: errors", () => {
  test("a role without grants gets a PlatformSetupError (privileges) in the warehouse's own words, not retryable", async () => {
    await using world = await warehouseWorld({ users: [{ user: "reader", password: "secret", readOnly: true }] }, { user: "reader", password: "secret" });
    const err = await world.store.ensureTable(world.ref("priv0001", "items"), SPEC).catch((e) => e);
    expect(err).toBeInstanceOf(DriverError);
    expect(err).not.toBeInstanceOf(VectorStoreError);
    expect((err as DriverError).message).toStartWith(`SQL access control error:\nInsufficient privileges to operate on database '${world.fake.database}'. Platform mode needs CREATE SCHEMA`);
    expect(err).toBeInstanceOf(PlatformSetupError);
    expect((err as PlatformSetupError).kind).toBe("privileges");
    expect((err as DriverError).retryable).toBe(false);
  });

  test("refs that are not ours and shapes the warehouse cannot hold are refused before any SQL", async () => {
    await using world = await warehouseWorld();
    for (const ref of ["DB.PUBLIC.VT_X", "DB.VECSYNC.vt_x", "VECSYNC.VT_X", "DB.VECSYNC.VT_X__G2", 'D"B.VECSYNC.VT_X']) {
      await expect(world.store.hasTable(ref)).rejects.toMatchObject({ code: "invalid_name" });
    }
    const ref = world.ref("shape001", "x");
    await expect(world.store.ensureTable(ref, { ...SPEC, dimensions: 4097 })).rejects.toMatchObject({ code: "invalid_row" });
    expect(await world.store.hasTable(ref)).toBe(false);
    expect(() => new WarehouseVectorStore(null as never).refFor("abcdefgh", "x")).toThrow(/needs the connection's `database`/);
  });
});
