// Credentials are sealed at rest and never answered (docs/running.md#secrets).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTestApp, type TestApp } from "../../harness.ts";
import { newOrganization, type TestOrg } from "../../helpers/organizations.ts";
import { createConnection, KEY_BODY_SAMPLE, newConnection, RSA_PKCS8, SECRET_PASSWORD, warehouseCredentials } from "./helpers.ts";

let app: TestApp;
let org: TestOrg;
beforeAll(async () => {
  app = await createTestApp();
  org = await newOrganization(app);
});
afterAll(() => app[Symbol.asyncDispose]());

describe("happy", () => {
  test("the credentials column holds a sealed value, not the password or the key", async () => {
    const rel = await newConnection(app, org.owner.key);
    const wh = await newConnection(app, org.owner.key, { provider: "db_warehouse", credentials: warehouseCredentials({ auth_method: "key_pair", password: undefined, private_key: RSA_PKCS8 }) });
    const rows = await app.services.database.client.execute({ sql: "SELECT * FROM connections WHERE id IN (?, ?)", args: [rel.id, wh.id] });
    expect(rows.rows.length).toBe(2);
    for (const row of rows.rows) {
      const dump = JSON.stringify(row);
      expect(dump).not.toContain(SECRET_PASSWORD);
      expect(dump).not.toContain(KEY_BODY_SAMPLE);
      expect(String(row.credentials)).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    }
  });

  test("no answer of any connection endpoint carries a secret", async () => {
    const c = await newConnection(app, org.owner.key);
    const answers = [
      await createConnection(app, org.owner.key, { provider: "db_warehouse", credentials: warehouseCredentials({ auth_method: "key_pair", password: undefined, private_key: RSA_PKCS8 }) }),
      await app.request("GET", "/v1/connections?limit=100", { headers: org.owner.key }),
      await app.request("GET", `/v1/connections/${c.id}`, { headers: org.owner.key }),
      await app.request("PUT", `/v1/connections/${c.id}`, { headers: org.owner.key, body: { credentials: { host: "127.0.0.1", database: "d", user: "u", password: SECRET_PASSWORD } } }),
      await app.request("GET", `/trpc/connections.list`, { headers: org.owner.key }),
    ];
    for (const res of answers) {
      expect(res.status).toBeLessThan(300);
      const text = await res.text();
      expect(text).not.toContain(SECRET_PASSWORD);
      expect(text).not.toContain(KEY_BODY_SAMPLE);
      expect(text).not.toContain("credentials");
    }
  });
});

describe("errors", () => {
  test("a sealed value moved to another purpose does not open", () => {
    const sealed = app.services.secrets.seal("x", "connection.credentials");
    expect(() => app.services.secrets.open(sealed, "embedding_provider.api_key")).toThrow();
  });
});
