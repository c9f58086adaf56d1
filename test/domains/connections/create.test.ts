import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, readOnlyKey, json, type TestOrg } from "../../helpers/organizations.ts";
import { createConnection, KEY_BODY_SAMPLE, newConnection, relationalCredentials, RSA_PKCS1, RSA_PKCS8, SECRET_PASSWORD, warehouseCredentials } from "./helpers.ts";

let app: TestApp;
let org: TestOrg;
beforeAll(async () => {
  app = await createTestApp();
  org = await newOrganization(app);
});
afterAll(() => app[Symbol.asyncDispose]());

const prodOf = async (o: TestOrg) => ((await json(await app.request("GET", "/v1/environments", { headers: o.owner.key }))).data as { id: string; name: string }[]).find((e) => e.name === "prod")!;

/** The 400 answer's details, after checking it is a validation_error that leaks no secret. */
async function rejected(res: Response): Promise<{ path: string; message: string }[]> {
  const text = await res.text();
  expect(res.status).toBe(400);
  expect(text).not.toContain(SECRET_PASSWORD);
  expect(text).not.toContain(KEY_BODY_SAMPLE);
  const body = JSON.parse(text);
  expect(body.error.code).toBe("validation_error");
  return body.error.details;
}

describe("happy", () => {
  test("db_relational: 201 Connection, pending, in prod, no credentials field", async () => {
    const res = await createConnection(app, org.owner.key, { name: "orders-db", mode: "managed" });
    expect(res.status).toBe(201);
    const body = await json(res);
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-z]{16,}$/),
      org_id: org.id,
      environment_id: (await prodOf(org)).id,
      name: "orders-db",
      provider: "db_relational",
      mode: "managed",
      status: "pending",
      last_tested_at: null,
      created_at: expect.any(String),
      updated_at: body.created_at,
    });
  });

  test("db_warehouse with a password, and with an RSA key pair (PKCS#8 or PKCS#1 PEM); platform mode", async () => {
    const a = await newConnection(app, org.owner.key, { provider: "db_warehouse", mode: "platform", credentials: warehouseCredentials({ warehouse: "WH", database: "DB", role: "R" }) });
    expect(a).toMatchObject({ provider: "db_warehouse", mode: "platform", status: "pending" });
    for (const pem of [RSA_PKCS8, RSA_PKCS1]) {
      const c = await newConnection(app, org.owner.key, { provider: "db_warehouse", credentials: warehouseCredentials({ auth_method: "key_pair", password: undefined, private_key: pem }) });
      expect(c.provider).toBe("db_warehouse");
    }
  });

  test("X-Environment-Id puts the connection in that environment", async () => {
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "staging" } }));
    const c = await newConnection(app, org.owner.key, { environmentId: env.id });
    expect(c.environment_id).toBe(env.id);
  });

  test("defaults are stored: port 5432, schema PUBLIC", async () => {
    const { openCredentials } = await import("../../../src/domains/connections/credentials.ts");
    const rel = await newConnection(app, org.owner.key);
    const wh = await newConnection(app, org.owner.key, { provider: "db_warehouse", credentials: warehouseCredentials() });
    const sealedOf = async (id: string) => String((await app.services.database.client.execute({ sql: "SELECT credentials FROM connections WHERE id = ?", args: [id] })).rows[0]!.credentials);
    expect(openCredentials(app.services.secrets, await sealedOf(rel.id))).toMatchObject({ port: 5432 });
    expect(openCredentials(app.services.secrets, await sealedOf(wh.id))).toMatchObject({ schema: "PUBLIC" });
  });
});

describe("errors", () => {
  test("unknown provider → 400", async () => {
    expect(await rejected(await createConnection(app, org.owner.key, { provider: "db_nosql" }))).toEqual([{ path: "provider", message: expect.stringContaining("db_relational") }]);
  });

  test.each([
    ["missing host", { host: undefined }, "credentials.host"],
    ["missing database", { database: undefined }, "credentials.database"],
    ["missing user", { user: undefined }, "credentials.user"],
    ["missing password", { password: undefined }, "credentials.password"],
    ["port not an integer", { port: "5432" }, "credentials.port"],
    ["port out of range", { port: 70000 }, "credentials.port"],
    ["unknown ssl_mode", { ssl_mode: SECRET_PASSWORD }, "credentials.ssl_mode"],
    ["unknown field", { passwd: SECRET_PASSWORD }, "credentials.passwd"],
    ["a socket path as host", { host: "/var/run/postgresql" }, "credentials.host"],
    ["host:port as host", { host: "db.example.com:5432" }, "credentials.host"],
    ["a metadata address as host", { host: "169.254.169.254" }, "credentials.host"],
    ["a metadata address spelled as a number", { host: "2852039166" }, "credentials.host"],
  ])("db_relational, %s → 400 at %s", async (_, over, path) => {
    const details = await rejected(await createConnection(app, org.owner.key, { credentials: relationalCredentials(over) }));
    expect(details.map((d) => d.path)).toContain(path);
  });

  test.each([
    ["missing auth_method", { auth_method: undefined }, "credentials.auth_method", undefined],
    ["unknown auth_method", { auth_method: "oauth" }, "credentials.auth_method", undefined],
    ["missing account", { account: undefined }, "credentials.account", undefined],
    ["account that is not an identifier", { account: "evil.com/@169.254.169.254" }, "credentials.account", undefined],
    ["missing user", { user: undefined }, "credentials.user", undefined],
    ["password method without password", { password: undefined }, "credentials.password", "is required when auth_method is password"],
    ["password method with a private key", { private_key: RSA_PKCS8 }, "credentials.private_key", "is only used with auth_method key_pair"],
    ["key_pair without private_key", { auth_method: "key_pair", password: undefined }, "credentials.private_key", "is required when auth_method is key_pair"],
    ["key_pair with a password", { auth_method: "key_pair", private_key: RSA_PKCS8 }, "credentials.password", "is only used with auth_method password"],
    ["key_pair with a private key that is not PEM", { auth_method: "key_pair", password: undefined, private_key: SECRET_PASSWORD }, "credentials.private_key", "must be a PEM-encoded private key"],
    ["unknown field", { token: SECRET_PASSWORD }, "credentials.token", "is not a known field"],
  ])("db_warehouse, %s → 400 at %s", async (_, over, path, message) => {
    const details = await rejected(await createConnection(app, org.owner.key, { provider: "db_warehouse", credentials: warehouseCredentials(over) }));
    expect(details).toContainEqual(message ? { path, message } : { path, message: expect.any(String) });
  });

  test("private keys that parse but are not usable: a public key, an encrypted key, an EC key", async () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const cases = [
      [rsa.publicKey.export({ type: "spki", format: "pem" }).toString(), "must be a PEM-encoded private key"],
      [rsa.privateKey.export({ type: "pkcs8", format: "pem", cipher: "aes-256-cbc", passphrase: SECRET_PASSWORD }).toString(), "is encrypted with a passphrase; provide the key unencrypted"],
      [generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }).toString(), "must be an RSA private key (key-pair sign-in uses RSA)"],
    ] as const;
    for (const [pem, message] of cases) {
      const res = await createConnection(app, org.owner.key, { provider: "db_warehouse", credentials: warehouseCredentials({ auth_method: "key_pair", password: undefined, private_key: pem }) });
      const text = await res.text();
      expect(text).not.toContain(pem.split("\n")[2]!);
      expect(JSON.parse(text).error.details).toEqual([{ path: "credentials.private_key", message }]);
    }
  });

  test("body rules: name 1-100, mode, credentials an object, no unknown fields", async () => {
    const post = (body: unknown) => app.request("POST", "/v1/providers/db_relational/connections", { headers: org.owner.key, body });
    const good = { name: "x", mode: "managed", credentials: relationalCredentials() };
    for (const body of [{ ...good, name: "" }, { ...good, name: "n".repeat(101) }, { ...good, mode: "hosted" }, { ...good, credentials: "postgres://u:p@h/db" }, { ...good, status: "connected" }, { name: "x", mode: "managed" }]) {
      await rejected(await post(body));
    }
  });

  test("duplicate name in the organization → 409 name_taken, also across environments", async () => {
    const env = await json(await app.request("POST", "/v1/environments", { headers: org.owner.key, body: { name: "dup-env" } }));
    await newConnection(app, org.owner.key, { name: "twice" });
    const res = await createConnection(app, org.owner.key, { name: "twice", environmentId: env.id });
    expect(res.status).toBe(409);
    expect((await json(res)).error.code).toBe("name_taken");
  });

  test("unknown or another organization's X-Environment-Id → 404", async () => {
    const other = await newOrganization(app);
    for (const environmentId of ["0000000000000000000000000z", (await prodOf(other)).id]) {
      const res = await createConnection(app, org.owner.key, { environmentId });
      expect(res.status).toBe(404);
      expect((await json(res)).error.code).toBe("not_found");
    }
  });
});

describe("authz", () => {
  test("a read_only key → 403 insufficient_permission; a JWT → 401; no credential → 401", async () => {
    const ro = await readOnlyKey(app, org.owner);
    const denied = await createConnection(app, ro);
    expect(denied.status).toBe(403);
    expect((await json(denied)).error.code).toBe("insufficient_permission");
    expect((await createConnection(app, org.owner.jwt)).status).toBe(401);
    expect((await app.request("POST", "/v1/providers/db_relational/connections", { body: { name: "x", mode: "managed", credentials: relationalCredentials() } })).status).toBe(401);
  });

  test("any role with a full key may create", async () => {
    const { addMember } = await import("../../helpers/organizations.ts");
    const member = await addMember(app, org, "member");
    expect((await createConnection(app, member.key)).status).toBe(201);
  });
});
