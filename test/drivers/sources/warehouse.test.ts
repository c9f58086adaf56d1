// The warehouse source driver (snowflake-sdk) against the DuckDB-backed test server
// (test/fakes/warehouse): the shared contract, then what only the warehouse has (key-pair login,
// result chunks, change tracking by timestamps, upper-case identifiers).
//
// Contract behaviours omitted, and why:
// - cdc-per-commit: CHANGES answers the net difference between two instants, not transactions;
//   commits between two polls arrive as one batch, and a TRUNCATE arrives as every key deleted
//   (or allRowsChanged past maxChangedKeys). Tested below in the warehouse's own terms.
// - cdc-teardown-loses-feed: teardownCdc leaves change tracking on (a table property shared by
//   every feed on the table, see warehouse.ts); a checkpoint stays usable until retention passes
//   — the CdcFeedLostError path is tested below through retention and tracking turned off.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { createWarehouseSource, WarehouseSource, type WarehouseCredentials } from "../../../src/drivers/sources/warehouse.ts";
import { CdcFeedLostError, type ChangeBatch, type ChangeStream } from "../../../src/drivers/sources/types.ts";
import { DriverError } from "../../../src/shared/errors.ts";
import { startFakeWarehouse, type FakeWarehouse, type FakeWarehouseOptions } from "../../fakes/warehouse/server.ts";
import { sourceContract, type SourceWorld } from "./contract.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const TYPES = { key: "NUMBER(38,0)", text: "VARCHAR", int: "INTEGER", bool: "BOOLEAN" };

async function openWorld(
  fakeOptions: FakeWarehouseOptions = {},
  credentials: Partial<WarehouseCredentials> = {},
): Promise<SourceWorld & { fake: FakeWarehouse; source: WarehouseSource }> {
  const fake = await startFakeWarehouse(fakeOptions);
  const source = new WarehouseSource(
    { authMethod: "password", account: fake.account, user: "tester", password: "secret", ...credentials },
    { url: fake.url, pollMs: 20, maxChangedKeys: 50 },
  );
  return {
    connector: source,
    source,
    fake,
    exec: (sql) => fake.exec(sql),
    types: TYPES,
    identifier: (name) => name.toUpperCase(),
    async [Symbol.asyncDispose]() {
      await source.close();
      await fake.close();
    },
  };
}

sourceContract("warehouse", () => openWorld(), ["cdc-per-commit", "cdc-teardown-loses-feed"]);

async function nextBatch(stream: ChangeStream, timeoutMs = 5000): Promise<ChangeBatch> {
  const timeout = Bun.sleep(timeoutMs).then(() => Promise.reject(new Error(`no change batch within ${timeoutMs} ms`)));
  const result = await Promise.race([stream[Symbol.asyncIterator]().next(), timeout]);
  if (result.done) throw new Error("change stream ended");
  return result.value;
}

const sortedKeys = (batch: ChangeBatch) => batch.keys.map((k) => k[0] as number).sort((a, b) => a - b);

describe("warehouse: happy", () => {
  test("key-pair login signs a JWT the server verifies against the registered public key", async () => {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const pem = privateKey.export({ format: "pem", type: "pkcs1" }).toString(); // PKCS#1 is accepted too
    await using world = await openWorld({ users: [{ user: "robot", publicKeyPem: publicKey.export({ format: "pem", type: "spki" }).toString() }] }, { authMethod: "key_pair", user: "robot", password: undefined, privateKey: pem });
    expect((await world.connector.test()).latencyMs).toBeGreaterThanOrEqual(0);
    const login = world.fake.requests.find((r) => r.path.startsWith("/session/v1/login-request"))!.body as { data: Record<string, unknown> };
    expect(login.data.AUTHENTICATOR).toBe("SNOWFLAKE_JWT");
    expect(login.data.PASSWORD).toBeUndefined();
  });

  test("a large page arrives through result chunks, complete and in key order", async () => {
    await using world = await openWorld({ inlineRows: 100, chunkRows: 400 });
    await world.exec("CREATE TABLE big (id NUMBER(38,0) PRIMARY KEY, title VARCHAR)");
    await world.exec("INSERT INTO big SELECT i, 'row ' || i FROM range(1, 2501) t(i)");
    const rows = await world.connector.scan({ table: "big", pk: ["id"], columns: ["title"], afterPk: null, limit: 2000 });
    expect(rows.map((r) => r.key[0])).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
    expect(rows[1999]!.values.title).toBe("row 2000");
    expect(world.fake.requests.filter((r) => r.path.startsWith("/__results/"))).toHaveLength(5);
    const hashes = await world.connector.hashes({ table: "big", pk: ["id"], textColumns: ["title"], metaColumns: [], afterPk: [2000], limit: 2000 });
    expect(hashes.map((h) => h.key[0])).toEqual(Array.from({ length: 500 }, (_, i) => i + 2001));
  });

  test("values of the warehouse's types read back stable for rendering text", async () => {
    await using world = await openWorld();
    await world.exec(`CREATE TABLE typed (id NUMBER(38,0) PRIMARY KEY, n NUMBER(10,2), f FLOAT, d DATE, ts TIMESTAMP_NTZ, v VARIANT, e VECTOR(FLOAT, 3))`);
    await world.exec(`INSERT INTO typed VALUES (9007199254740993, 12.5, 0.1, '2024-02-29', '2024-03-01 10:34:56.123', '{"a": 1}', [1, 2, 3])`);
    const columns = await world.connector.describeTable("typed");
    expect(columns.map((c) => `${c.name}:${c.type}`)).toEqual(["ID:NUMBER", "N:NUMBER", "F:FLOAT", "D:DATE", "TS:TIMESTAMP_NTZ", "V:VARIANT", "E:VECTOR"]);
    const [row] = await world.connector.scan({ table: "typed", pk: ["id"], columns: ["n", "f", "d", "ts", "v", "e"], afterPk: null, limit: 5 });
    expect(row!.values).toEqual({ id: "9007199254740993", n: "12.50", f: 0.1, d: "2024-02-29", ts: "2024-03-01T10:34:56.123Z", v: '{"a": 1}', e: "[1,2,3]" });
    // A key past 2^53 round-trips as a keyset bound.
    expect(await world.connector.scan({ table: "typed", pk: ["id"], columns: [], afterPk: ["9007199254740992"], limit: 5 })).toHaveLength(1);
  });

  test("describeTable marks the key columns the caller names as not nullable", async () => {
    await using world = await openWorld();
    await world.exec("CREATE TABLE loose (code VARCHAR, note VARCHAR)");
    const columns = await world.source.describeTable("loose", ["code"]);
    expect(columns.map((c) => c.nullable)).toEqual([false, true]);
  });

  test("commits between two polls arrive as one batch of the net changed keys", async () => {
    await using world = await openWorld();
    await world.exec(`CREATE TABLE items (id NUMBER(38,0) PRIMARY KEY, title VARCHAR)`);
    await world.exec(`INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c')`);
    const target = { stream: "s1", table: "items", pk: ["id"] };
    const { checkpoint } = await world.connector.prepareCdc(target);
    await world.exec(`UPDATE items SET title = 'x' WHERE id = 1; DELETE FROM items WHERE id = 2; UPDATE items SET id = 30 WHERE id = 3`);
    await world.exec(`BEGIN; INSERT INTO items VALUES (4, 'd'); DELETE FROM items WHERE id = 4; COMMIT`); // nets to nothing
    const stream = await world.connector.changes(target, checkpoint);
    const batch = await nextBatch(stream);
    expect(sortedKeys(batch)).toEqual([1, 2, 3, 30]);
    expect(batch.allRowsChanged).toBe(false);
    await world.exec("TRUNCATE TABLE items");
    expect(sortedKeys(await nextBatch(stream))).toEqual([1, 30]);
    await stream.close();
  });

  test("more changed keys than maxChangedKeys arrive as allRowsChanged", async () => {
    await using world = await openWorld();
    await world.exec(`CREATE TABLE items (id NUMBER(38,0) PRIMARY KEY, title VARCHAR)`);
    const target = { stream: "s2", table: "items", pk: ["id"] };
    const { checkpoint } = await world.connector.prepareCdc(target);
    await world.exec("INSERT INTO items SELECT i, 't' FROM range(1, 61) t(i)");
    const stream = await world.connector.changes(target, checkpoint);
    expect(await nextBatch(stream)).toMatchObject({ allRowsChanged: true, keys: [] });
    await stream.close();
  });

  test("the fake takes gzipped request bodies as the driver may send them", async () => {
    await using fake = await startFakeWarehouse();
    const body = Bun.gzipSync(JSON.stringify({ data: { ACCOUNT_NAME: fake.account, LOGIN_NAME: "tester", PASSWORD: "secret" } }));
    const res = await fetch(`${fake.url}/session/v1/login-request`, { method: "POST", headers: { "content-type": "application/json", "content-encoding": "gzip" }, body });
    expect(((await res.json()) as { success: boolean }).success).toBe(true);
  });

  test("the fake evaluates the vector functions deterministically", async () => {
    await using world = await openWorld();
    const result = await world.source.run(
      `SELECT VECTOR_COSINE_SIMILARITY([1, 0, 0]::VECTOR(FLOAT, 3), [1, 0, 0]::VECTOR(FLOAT, 3)),
              VECTOR_COSINE_SIMILARITY(SNOWFLAKE.CORTEX.EMBED_TEXT_768('e5-base-v2', 'hello'), SNOWFLAKE.CORTEX.EMBED_TEXT_768('e5-base-v2', 'hello'))`,
      [],
      "vectors",
    );
    expect(result.rows[0]!.map((v) => Math.round(Number(v) * 1000) / 1000)).toEqual([1, 1]);
  });
});

describe("warehouse: errors", () => {
  test("a wrong password is the warehouse's error, not retryable, without the password", async () => {
    await using world = await openWorld({}, { password: "wrong-Pa55word" });
    const err = await world.connector.test().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DriverError);
    expect((err as DriverError).retryable).toBe(false);
    expect((err as DriverError).message).toContain("Incorrect username or password");
    expect(JSON.stringify({ m: (err as DriverError).message, c: (err as DriverError).cause, x: (err as DriverError).context })).not.toContain("wrong-Pa55word");
  });

  test("a key the user has not registered is refused", async () => {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ format: "pem", type: "spki" }).toString();
    await using world = await openWorld({ users: [{ user: "robot", publicKeyPem: other }] }, { authMethod: "key_pair", user: "robot", privateKey: privateKey.export({ format: "pem", type: "pkcs8" }).toString() });
    const err = (await world.connector.test().catch((e: unknown) => e)) as DriverError;
    expect(err).toBeInstanceOf(DriverError);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain("JWT token is invalid");
  });

  test("a closed port is a retryable error", async () => {
    const source = createWarehouseSource({ authMethod: "password", account: "x", user: "u", password: "p" }, { url: "http://127.0.0.1:9" });
    const err = (await source.test().catch((e: unknown) => e)) as DriverError;
    await source.close();
    expect(err).toBeInstanceOf(DriverError);
    expect(err.retryable).toBe(true);
  }, 30_000);

  test("a checkpoint past retention, or on a table without change tracking, is a lost feed", async () => {
    await using world = await openWorld();
    await world.exec(`CREATE TABLE items (id NUMBER(38,0) PRIMARY KEY, title VARCHAR); CREATE TABLE other (id NUMBER(38,0) PRIMARY KEY)`);
    const target = { stream: "s3", table: "items", pk: ["id"] };
    const { checkpoint } = await world.connector.prepareCdc(target);
    await Bun.sleep(5);
    await world.exec("ALTER TABLE items SET DATA_RETENTION_TIME_IN_DAYS = 0");
    expect(await world.connector.changes(target, checkpoint).catch((e: unknown) => e)).toBeInstanceOf(CdcFeedLostError);
    const untracked = await world.connector.changes({ ...target, table: "other" }, checkpoint).catch((e: unknown) => e);
    expect(untracked).toBeInstanceOf(CdcFeedLostError);
  });

  test("close ends the warehouse session", async () => {
    const world = await openWorld();
    await world.connector.test();
    expect(world.fake.openSessions()).toBe(1);
    await world.source.close();
    expect(world.fake.openSessions()).toBe(0);
    await world.fake.close();
  });
});
