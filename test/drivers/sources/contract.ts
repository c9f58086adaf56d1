// The SourceConnector contract (STYLE 7): behaviours every source driver must show, run against
// each driver by its own test file with a world that speaks that source's SQL. A driver lists
// the behaviours it omits and why (`omit`), e.g. a source without row-level CDC. Omitted
// behaviours are not registered at all (CI runs no skipped tests).
import { beforeEach, describe, expect, test } from "bun:test";
import { CdcFeedLostError, FETCH_CHUNK, positionOnly, SourceObjectNotFoundError, type ChangeBatch, type ChangeStream, type SourceConnector } from "../../../src/drivers/sources/types.ts";

/** A fresh, empty source database with the driver connected to it. */
export interface SourceWorld extends AsyncDisposable {
  connector: SourceConnector;
  /** Runs statements in the source's own SQL, outside the driver. */
  exec(sqlText: string): Promise<void>;
  /** The source's spelling of a few portable column types. */
  types: { key: string; text: string; int: string; bool: string };
  /** How the source's catalog spells an unquoted identifier (Postgres folds to lower case, the warehouse to upper); default as written. */
  identifier?: (unquoted: string) => string;
}

/**
 * cdc: change feeds at all. cdc-per-commit: one batch per source transaction, TRUNCATE as
 * `allRowsChanged`. cdc-teardown-loses-feed: a checkpoint is unusable after teardownCdc.
 */
export type ContractBehaviour = "cdc" | "cdc-per-commit" | "cdc-teardown-loses-feed";

const PK = ["id"];

async function itemsTable(world: SourceWorld, rows = 25) {
  const { key, text, int, bool } = world.types;
  await world.exec(`CREATE TABLE items (id ${key} PRIMARY KEY, title ${text}, body ${text}, stock ${int}, active ${bool})`);
  const values = Array.from({ length: rows }, (_, i) => `(${i + 1}, 'title ${i + 1}', 'body ${i + 1}', ${i}, ${i % 2 === 0})`);
  if (rows > 0) await world.exec(`INSERT INTO items VALUES ${values.join(", ")}`);
}

/** Next batch with changes (position-only ones are skipped), or a clear failure instead of a hung test. */
async function nextBatch(stream: ChangeStream, timeoutMs = 10_000): Promise<ChangeBatch> {
  const it = stream[Symbol.asyncIterator]();
  const timeout = Bun.sleep(timeoutMs).then(() => {
    throw new Error(`no change batch within ${timeoutMs} ms`);
  });
  for (;;) {
    const result = await Promise.race([it.next(), timeout]);
    if (result.done) throw new Error("change stream ended");
    if (!positionOnly(result.value)) return result.value;
  }
}

export function sourceContract(name: string, open: () => Promise<SourceWorld>, omit: ContractBehaviour[] = []) {
  const has = (behaviour: ContractBehaviour) => !omit.includes(behaviour) && (behaviour === "cdc" || !omit.includes("cdc"));
  const testIf = (behaviour: ContractBehaviour, title: string, fn: () => Promise<void>) => {
    if (has(behaviour)) test(title, fn);
  };
  describe(`${name}: happy`, () => {
    test("describeTable lists columns in table order; the key is not nullable", async () => {
      await using world = await open();
      await itemsTable(world, 0);
      const columns = await world.connector.describeTable("items");
      expect(columns.map((c) => c.name)).toEqual(["id", "title", "body", "stock", "active"].map(world.identifier ?? ((n) => n)));
      expect(columns.map((c) => c.nullable)).toEqual([false, true, true, true, true]);
    });

    test("scan pages through every row once, in key order, and count agrees", async () => {
      await using world = await open();
      await itemsTable(world, 25);
      const seen: number[] = [];
      let afterPk = null;
      for (;;) {
        const page = await world.connector.scan({ table: "items", pk: PK, columns: ["title"], afterPk, limit: 7 });
        if (page.length === 0) break;
        seen.push(...page.map((r) => r.key[0] as number));
        afterPk = page.at(-1)!.key;
      }
      expect(seen).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
      expect(await world.connector.count("items")).toBe(25);
    });

    test("scan returns typed values, NULLs and unicode as stored", async () => {
      await using world = await open();
      await itemsTable(world, 0);
      await world.exec(`INSERT INTO items VALUES (1, 'héllo wörld — 東京 🚀', NULL, 7, true), (2, '', 'x', NULL, NULL)`);
      const rows = await world.connector.scan({ table: "items", pk: PK, columns: ["title", "body", "stock", "active"], afterPk: null, limit: 10 });
      expect(rows.map((r) => r.values)).toEqual([
        { id: 1, title: "héllo wörld — 東京 🚀", body: null, stock: 7, active: true },
        { id: 2, title: "", body: "x", stock: null, active: null },
      ]);
    });

    test("hashes are stable across runs and change exactly with their columns", async () => {
      await using world = await open();
      await itemsTable(world, 5);
      const request = { table: "items", pk: PK, textColumns: ["title", "body"], metaColumns: ["stock", "active"], afterPk: null, limit: 100 };
      const before = await world.connector.hashes(request);
      expect(before).toHaveLength(5);
      expect(before.every((h) => /^[0-9a-f]{32}$/.test(h.textHash) && /^[0-9a-f]{32}$/.test(h.metaHash))).toBe(true);
      expect(await world.connector.hashes(request)).toEqual(before);

      await world.exec(`UPDATE items SET body = 'changed' WHERE id = 2`);
      await world.exec(`UPDATE items SET stock = 99 WHERE id = 3`);
      await world.exec(`UPDATE items SET title = NULL WHERE id = 4`);
      await world.exec(`UPDATE items SET title = '' WHERE id = 5`);
      const after = await world.connector.hashes(request);
      const changed = (i: number) => [after[i]!.textHash !== before[i]!.textHash, after[i]!.metaHash !== before[i]!.metaHash];
      expect([0, 1, 2, 3, 4].map(changed)).toEqual([[false, false], [true, false], [false, true], [true, false], [true, false]]);
      expect(after[3]!.textHash).not.toBe(after[4]!.textHash); // NULL and '' differ
    });

    test("composite keys page, hash and fetch by the whole key", async () => {
      await using world = await open();
      const { key, text } = world.types;
      await world.exec(`CREATE TABLE pairs (a ${key}, b ${text}, note ${text}, PRIMARY KEY (a, b))`);
      await world.exec(`INSERT INTO pairs VALUES (1, 'x', 'n1'), (1, 'y', 'n2'), (2, 'a', 'n3'), (2, 'b', 'n4'), (3, 'a', 'n5')`);
      const pk = ["a", "b"];
      const first = await world.connector.scan({ table: "pairs", pk, columns: ["note"], afterPk: null, limit: 2 });
      const second = await world.connector.scan({ table: "pairs", pk, columns: ["note"], afterPk: first.at(-1)!.key, limit: 2 });
      expect([...first, ...second].map((r) => r.key)).toEqual([[1, "x"], [1, "y"], [2, "a"], [2, "b"]]);
      const hashes = await world.connector.hashes({ table: "pairs", pk, textColumns: ["note"], metaColumns: [], afterPk: [2, "a"], limit: 10 });
      expect(hashes.map((h) => h.key)).toEqual([[2, "b"], [3, "a"]]);
      const fetched = await world.connector.fetchByKeys({ table: "pairs", pk, columns: ["note"], keys: [[3, "a"], [1, "y"], [9, "z"]] });
      expect(fetched.map((r) => r.values.note).sort()).toEqual(["n2", "n5"]);
    });

    test("fetchByKeys answers the rows that exist; a missing key is absent", async () => {
      await using world = await open();
      await itemsTable(world, 10);
      const rows = await world.connector.fetchByKeys({ table: "items", pk: PK, columns: ["title"], keys: [[3], [42], [7]] });
      expect(rows.map((r) => r.values).sort((x, y) => Number(x.id) - Number(y.id))).toEqual([{ id: 3, title: "title 3" }, { id: 7, title: "title 7" }]);
      expect(await world.connector.fetchByKeys({ table: "items", pk: PK, columns: ["title"], keys: [] })).toEqual([]);
    });

    test("hashesByKeys answers the paged read's hashes for the keys that exist, past one fetch chunk", async () => {
      await using world = await open();
      const rows = FETCH_CHUNK + 150;
      await itemsTable(world, rows);
      await world.exec(`UPDATE items SET title = NULL WHERE id = 4`);
      await world.exec(`UPDATE items SET title = '' WHERE id = 5`);
      const columns = { table: "items", pk: PK, textColumns: ["title", "body"], metaColumns: ["stock", "active"] };
      const paged = await world.connector.hashes({ ...columns, afterPk: null, limit: rows + 10 });
      expect(paged).toHaveLength(rows);
      const keys = [[rows + 7], ...paged.map((h) => h.key).reverse(), [-3]]; // two absent keys, the rest in reverse order
      const byKeys = await world.connector.hashesByKeys({ ...columns, keys });
      const sorted = byKeys.sort((x, y) => Number(x.key[0]) - Number(y.key[0]));
      expect(sorted).toEqual(paged);
      expect(await world.connector.hashesByKeys({ ...columns, keys: [] })).toEqual([]);
      const none = await world.connector.hashesByKeys({ ...columns, metaColumns: [], keys: [[rows + 1]] });
      expect(none).toEqual([]);
    });

    test("hashesByKeys with a composite key and no metadata columns agrees with the paged read", async () => {
      await using world = await open();
      const { key, text } = world.types;
      await world.exec(`CREATE TABLE pairs (a ${key}, b ${text}, note ${text}, PRIMARY KEY (a, b))`);
      await world.exec(`INSERT INTO pairs VALUES (1, 'x', 'n1'), (1, 'y', NULL), (2, 'a', 'n3'), (3, 'a', '')`);
      const columns = { table: "pairs", pk: ["a", "b"], textColumns: ["note"], metaColumns: [] };
      const paged = await world.connector.hashes({ ...columns, afterPk: null, limit: 10 });
      const byKeys = await world.connector.hashesByKeys({ ...columns, keys: [[3, "a"], [1, "y"], [9, "z"], [1, "a"]] });
      const sorted = byKeys.sort((x, y) => Number(x.key[0]) - Number(y.key[0]));
      expect(sorted).toEqual([paged[1]!, paged[3]!]);
    });

    test("test() answers a latency", async () => {
      await using world = await open();
      const { latencyMs } = await world.connector.test();
      expect(latencyMs).toBeGreaterThanOrEqual(0);
    });
  });

  describe(`${name}: errors`, () => {
    test("an unknown table or column is a not-found error, not retryable", async () => {
      await using world = await open();
      await itemsTable(world, 1);
      const table = await world.connector.describeTable("nope").catch((e: unknown) => e);
      expect(table).toBeInstanceOf(SourceObjectNotFoundError);
      expect((table as SourceObjectNotFoundError).kind).toBe("table");
      const column = await world.connector.scan({ table: "items", pk: PK, columns: ["missing"], afterPk: null, limit: 1 }).catch((e: unknown) => e);
      expect(column).toBeInstanceOf(SourceObjectNotFoundError);
      expect((column as SourceObjectNotFoundError).kind).toBe("column");
      expect((column as SourceObjectNotFoundError).retryable).toBe(false);
    });

    test("a table dropped between pages fails the next page as not found", async () => {
      await using world = await open();
      await itemsTable(world, 10);
      const page = await world.connector.scan({ table: "items", pk: PK, columns: [], afterPk: null, limit: 5 });
      await world.exec("DROP TABLE items");
      const err = await world.connector.scan({ table: "items", pk: PK, columns: [], afterPk: page.at(-1)!.key, limit: 5 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SourceObjectNotFoundError);
      expect((err as SourceObjectNotFoundError).retryable).toBe(false);
    });
  });

  if (has("cdc")) describe(`${name}: cdc`, () => {
    // Replication slots are cluster-wide: a stream name per test keeps parallel runs apart.
    let target = { stream: "", table: "items", pk: PK };
    beforeEach(() => {
      target = { stream: `contract_${crypto.randomUUID().slice(0, 8)}`, table: "items", pk: PK };
    });

    testIf("cdc-per-commit", "insert, update, delete, key change and TRUNCATE arrive as the keys each commit touched", async () => {
      await using world = await open();
      await itemsTable(world, 3);
      const { checkpoint } = await world.connector.prepareCdc(target);
      try {
        const stream = await world.connector.changes(target, checkpoint);
        await world.exec(`INSERT INTO items VALUES (10, 'new', NULL, 1, true)`);
        await world.exec(`UPDATE items SET title = 'edited' WHERE id = 1`);
        await world.exec(`DELETE FROM items WHERE id = 2`);
        await world.exec(`UPDATE items SET id = 30 WHERE id = 3`);
        await world.exec(`BEGIN; UPDATE items SET stock = 5 WHERE id = 1; INSERT INTO items VALUES (11, 'b', NULL, 1, true); COMMIT`);
        await world.exec(`TRUNCATE items`);
        const batches: ChangeBatch[] = [];
        for (let i = 0; i < 6; i++) batches.push(await nextBatch(stream));
        const keys = batches.map((b) => (b.allRowsChanged ? "all" : b.keys.map((k) => k[0]).sort((x, y) => Number(x) - Number(y))));
        expect(keys).toEqual([[10], [1], [2], [3, 30], [1, 11], "all"]);
        const rows = await world.connector.fetchByKeys({ table: "items", pk: PK, columns: ["title"], keys: batches[1]!.keys });
        expect(rows).toEqual([]); // truncated since: re-reading at apply time sees the current state
        await stream.close();
      } finally {
        await world.connector.teardownCdc(target);
      }
    });

    test("a batch not acknowledged comes again from the stored checkpoint; an acknowledged one does not", async () => {
      await using world = await open();
      await itemsTable(world, 1);
      const { checkpoint } = await world.connector.prepareCdc(target);
      try {
        let stream = await world.connector.changes(target, checkpoint);
        await world.exec(`INSERT INTO items VALUES (2, 'two', NULL, 1, true)`);
        const first = await nextBatch(stream);
        await stream.close(); // no ack
        stream = await world.connector.changes(target, checkpoint);
        expect(await nextBatch(stream)).toEqual(first);
        await stream.ack(first.checkpoint);
        await stream.close();

        stream = await world.connector.changes(target, first.checkpoint);
        await world.exec(`INSERT INTO items VALUES (3, 'three', NULL, 1, true)`);
        expect((await nextBatch(stream)).keys).toEqual([[3]]);
        await stream.close();
      } finally {
        await world.connector.teardownCdc(target);
      }
    });

    test("a change made after prepareCdc and before the backfill reads is not lost", async () => {
      await using world = await open();
      await itemsTable(world, 2);
      const { checkpoint } = await world.connector.prepareCdc(target);
      try {
        await world.exec(`UPDATE items SET title = 'between' WHERE id = 2`);
        const stream = await world.connector.changes(target, checkpoint);
        expect((await nextBatch(stream)).keys).toEqual([[2]]);
        await stream.close();
      } finally {
        await world.connector.teardownCdc(target);
      }
    });

    testIf("cdc-teardown-loses-feed", "after teardown the feed is reported lost, so the caller resyncs by hashes", async () => {
      await using world = await open();
      await itemsTable(world, 1);
      const { checkpoint } = await world.connector.prepareCdc(target);
      await world.connector.teardownCdc(target);
      const err = await world.connector.changes(target, checkpoint).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CdcFeedLostError);
    });
  });
}
