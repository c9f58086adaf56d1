// The Postgres source driver against the machine's real PostgreSQL, each test in a throwaway
// database: the shared contract, then what only Postgres has (type spellings, a 200k-row scan,
// the hash formula, a consumer killed before acknowledging, connection failures).
// Skipped contract behaviours: none.
import { describe, expect, test, setDefaultTimeout } from "bun:test";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { createPostgresSource, POSTGRES_HASH_ALGORITHM } from "../../../src/drivers/sources/postgres.ts";
import { DriverError } from "../../../src/shared/errors.ts";
import { positionOnly, type Key } from "../../../src/drivers/sources/types.ts";
import { PG_ADMIN_URL, throwawayPostgres } from "../../harness.ts";
import { sourceContract, type SourceWorld } from "./contract.ts";

// Starts processes or databases: slower than bun's 5 s default on a loaded 2-core machine.
setDefaultTimeout(30_000);

const PG_PORT = Number(new URL(PG_ADMIN_URL).port || 5432);
const credentials = (database: string, over: Record<string, unknown> = {}) => ({ host: "127.0.0.1", port: PG_PORT, database, user: "postgres", password: "", ...over });

async function openWorld(): Promise<SourceWorld & { database: string }> {
  const db = await throwawayPostgres();
  const connector = createPostgresSource(credentials(db.name));
  return {
    connector,
    database: db.name,
    async exec(text) {
      // A reserved connection, so a script may hold BEGIN … COMMIT.
      const connection = await db.sql.reserve();
      try {
        await connection.unsafe(text);
      } finally {
        connection.release();
      }
    },
    types: { key: "integer", text: "text", int: "integer", bool: "boolean" },
    async [Symbol.asyncDispose]() {
      await connector.close();
      await db[Symbol.asyncDispose]();
    },
  };
}

sourceContract("postgres", openWorld);

const ALL_TYPES = `CREATE TABLE typed (
  id bigint PRIMARY KEY, t text, v varchar(40), i integer, b bigint, n numeric(10,2), f double precision,
  r real, ok boolean, d date, ts timestamptz, j jsonb, u uuid, tags text[], nums integer[])`;

describe("postgres: happy", () => {
  test("describeTable spells types as format_type() does", async () => {
    await using world = await openWorld();
    await world.exec(ALL_TYPES);
    const columns = await world.connector.describeTable("typed");
    expect(columns.map((c) => `${c.name}:${c.type}`)).toEqual([
      "id:bigint", "t:text", "v:character varying(40)", "i:integer", "b:bigint", "n:numeric(10,2)", "f:double precision",
      "r:real", "ok:boolean", "d:date", "ts:timestamp with time zone", "j:jsonb", "u:uuid", "tags:text[]", "nums:integer[]",
    ]);
  });

  test("every type reads back as a value stable for rendering text", async () => {
    await using world = await openWorld();
    await world.exec(ALL_TYPES);
    await world.exec(`SET TimeZone = 'America/New_York'; INSERT INTO typed VALUES (9007199254740993, 'a "q"', 'vc', -5, 42, 12.5, 0.1, 1.5, false,
      '2024-02-29', '2024-03-01 12:34:56.123456+02', '{"b": 1, "a": [1, null]}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{x,"y z",NULL}', '{1,2}')`);
    await world.exec(`INSERT INTO typed (id) VALUES (1)`);
    const columns = ["t", "v", "i", "b", "n", "f", "r", "ok", "d", "ts", "j", "u", "tags", "nums"];
    const [nulls, full] = await world.connector.scan({ table: "typed", pk: ["id"], columns, afterPk: null, limit: 10 });
    expect(Object.values(nulls!.values).filter((v) => v !== null)).toEqual([1]);
    expect(full!.values).toEqual({
      id: "9007199254740993", t: 'a "q"', v: "vc", i: -5, b: 42, n: "12.50", f: 0.1, r: 1.5, ok: false, d: "2024-02-29",
      ts: "2024-03-01T10:34:56.123456Z", j: '{"a": [1, null], "b": 1}', u: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
      tags: '{x,"y z",NULL}', nums: "{1,2}",
    });
    // A key past 2^53 round-trips exactly as a keyset bound.
    const after = await world.connector.scan({ table: "typed", pk: ["id"], columns: [], afterPk: [1], limit: 10 });
    expect(after.map((r) => r.key)).toEqual([["9007199254740993"]]);
  });

  test("a timestamptz key pages without losing microseconds", async () => {
    await using world = await openWorld();
    await world.exec(`CREATE TABLE ev (at timestamptz PRIMARY KEY)`);
    await world.exec(`INSERT INTO ev VALUES ('2024-01-01 00:00:00.000001+00'), ('2024-01-01 00:00:00.000002+00'), ('2024-01-01 00:00:00.000003+00')`);
    const first = await world.connector.scan({ table: "ev", pk: ["at"], columns: [], afterPk: null, limit: 1 });
    const rest = await world.connector.scan({ table: "ev", pk: ["at"], columns: [], afterPk: first[0]!.key, limit: 5 });
    expect([...first, ...rest].map((r) => r.key[0])).toEqual(["2024-01-01T00:00:00.000001Z", "2024-01-01T00:00:00.000002Z", "2024-01-01T00:00:00.000003Z"]);
  });

  test("the hash is md5 of the row's text, tagged with the algorithm", async () => {
    await using world = await openWorld();
    await world.exec(`CREATE TABLE h (id int PRIMARY KEY, a text, b text, c int)`);
    await world.exec(`INSERT INTO h VALUES (1, 'x y', NULL, 3), (2, '', 'q"', NULL)`);
    const rows = await world.connector.hashes({ table: "h", pk: ["id"], textColumns: ["a", "b"], metaColumns: ["c"], afterPk: null, limit: 5 });
    const md5 = (s: string) => createHash("md5").update(s).digest("hex");
    expect(rows).toEqual([
      { key: [1], textHash: md5('("x y",)'), metaHash: md5("(3)") },
      { key: [2], textHash: md5('("","q""")'), metaHash: md5("()") },
    ]);
    expect(world.connector.hashAlgorithm).toBe(POSTGRES_HASH_ALGORITHM);
  });

  test("a mixed-case table name is found literally or by Postgres' folding; schema.table works", async () => {
    await using world = await openWorld();
    await world.exec(`CREATE TABLE "Mixed" (id int PRIMARY KEY); CREATE TABLE lower_one (id int PRIMARY KEY); CREATE SCHEMA s2; CREATE TABLE s2.other (id int PRIMARY KEY, x text)`);
    expect((await world.connector.describeTable("Mixed")).map((c) => c.name)).toEqual(["id"]);
    expect((await world.connector.describeTable("LOWER_ONE")).map((c) => c.name)).toEqual(["id"]);
    expect((await world.connector.describeTable("s2.other")).map((c) => c.name)).toEqual(["id", "x"]);
  });

  test("a 200k-row keyset scan reads every row once in key order", async () => {
    await using world = await openWorld();
    await world.exec(`CREATE TABLE big (id int PRIMARY KEY, body text); INSERT INTO big SELECT g, 'row ' || g FROM generate_series(1, 200000) g`);
    let afterPk: Key | null = null;
    let count = 0;
    let last = 0;
    let ordered = true;
    for (;;) {
      const page = await world.connector.scan({ table: "big", pk: ["id"], columns: ["body"], afterPk, limit: 10_000 });
      if (page.length === 0) break;
      for (const row of page) {
        ordered &&= (row.key[0] as number) === last + 1 && row.values.body === `row ${last + 1}`;
        last = row.key[0] as number;
      }
      count += page.length;
      afterPk = page.at(-1)!.key;
    }
    expect({ count, last, ordered }).toEqual({ count: 200_000, last: 200_000, ordered: true });
  });
});

describe("postgres: cdc", () => {
  test("kill -9 of a consumer between receive and acknowledge loses nothing", async () => {
    await using world = await openWorld();
    const db = world.database;
    await world.exec(`CREATE TABLE items (id int PRIMARY KEY, title text)`);
    const target = { stream: `killed_${crypto.randomUUID().slice(0, 8)}`, table: "items", pk: ["id"] };
    const { checkpoint } = await world.connector.prepareCdc(target);
    try {
      const child = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures/cdc-consumer.ts"), db, target.stream, checkpoint], { stdout: "pipe", stderr: "inherit" });
      const reader = child.stdout.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toBe("ready\n");
      await world.exec(`INSERT INTO items VALUES (7, 'seven')`);
      const received = JSON.parse(new TextDecoder().decode((await reader.read()).value)) as { keys: Key[] };
      child.kill("SIGKILL"); // first: a failed expectation below must not leave it running
      expect(received.keys).toEqual([[7]]);
      await child.exited;
      expect(child.signalCode).toBe("SIGKILL");

      const stream = await world.connector.changes(target, checkpoint);
      const it = stream[Symbol.asyncIterator]();
      let again = await it.next();
      while (again.value && positionOnly(again.value)) again = await it.next(); // past other WAL only
      expect(again.value?.keys).toEqual([[7]]);
      await stream.close();
    } finally {
      await world.connector.teardownCdc(target);
    }
  });

  test("a table without a usable replica identity is refused before anything is created", async () => {
    await using world = await openWorld();
    await world.exec(`CREATE TABLE nokey (id int, title text)`);
    const err = await world.connector.prepareCdc({ stream: "nokey", table: "nokey", pk: ["id"] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DriverError);
    expect((err as DriverError).message).toContain("replica identity");
  });
});

describe("postgres: errors", () => {
  // pg_hba.conf on this machine trusts 127.0.0.1, so any password is accepted there; an unknown
  // role and an unknown database are the authentication failures the server can still give.
  test("an unknown role is an authentication failure, not retryable, without the password", async () => {
    await using world = await openWorld();
    const db = world.database;
    const source = createPostgresSource(credentials(db, { user: "no_such_role_x", password: "s3cret-passw0rd" }));
    const err = (await source.test().catch((e: unknown) => e)) as DriverError;
    await source.close();
    expect(err).toBeInstanceOf(DriverError);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('role "no_such_role_x" does not exist');
    expect(err.message).not.toContain("s3cret-passw0rd");
  });

  test("an unknown database is not retryable and says so", async () => {
    const source = createPostgresSource(credentials("no_such_database_x"));
    const err = (await source.describeTable("t").catch((e: unknown) => e)) as DriverError;
    await source.close();
    expect(err).toBeInstanceOf(DriverError);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('database "no_such_database_x" does not exist');
  });

  test("a closed port is retryable", async () => {
    const source = createPostgresSource({ host: "127.0.0.1", port: 1, database: "x", user: "postgres", password: "pw" });
    const err = (await source.test().catch((e: unknown) => e)) as DriverError;
    await source.close();
    expect(err).toBeInstanceOf(DriverError);
    expect(err.retryable).toBe(true);
    expect(err.message).toContain("ECONNREFUSED");
  });

  test("an IPv6 address is dialled as given, not split at its colons", async () => {
    // The server here listens on 127.0.0.1 only: a refusal naming [::1]:<port> shows where we dialled.
    const source = createPostgresSource({ host: "::1", port: PG_PORT, database: "x", user: "postgres", password: "pw" });
    const err = (await source.test().catch((e: unknown) => e)) as DriverError;
    await source.close();
    expect(err.message).toContain(`::1:${PG_PORT}`);
  });
});
