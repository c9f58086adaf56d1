// Fixtures for the connections tests: valid credentials per provider and a create call.
import { generateKeyPairSync } from "node:crypto";
import type { TestApp } from "../../harness.ts";
import { json, type Bearer } from "../../helpers/organizations.ts";

/** A password unlike anything else in an answer, so finding it anywhere is a leak. */
export const SECRET_PASSWORD = "pw-S3cret-do-not-echo-7f3a";

export const relationalCredentials = (over: Record<string, unknown> = {}) => ({
  host: "127.0.0.1",
  database: "postgres",
  user: "postgres",
  password: SECRET_PASSWORD,
  ...over,
});

const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
export const RSA_PKCS8 = rsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
export const RSA_PKCS1 = rsa.privateKey.export({ type: "pkcs1", format: "pem" }).toString();
/** The base64 body of the key: no answer or error may contain any of it. */
export const KEY_BODY_SAMPLE = RSA_PKCS8.split("\n")[5]!;

export const warehouseCredentials = (over: Record<string, unknown> = {}) => ({
  auth_method: "password",
  account: "xy12345.us-east-2.aws",
  user: "LOADER",
  password: SECRET_PASSWORD,
  ...over,
});

export async function createConnection(
  app: TestApp,
  key: Bearer,
  opts: { provider?: string; name?: string; mode?: string; credentials?: unknown; environmentId?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...key };
  if (opts.environmentId) headers["x-environment-id"] = opts.environmentId;
  const body = { name: opts.name ?? `conn-${crypto.randomUUID().slice(0, 8)}`, mode: opts.mode ?? "managed", credentials: opts.credentials ?? relationalCredentials() };
  return app.request("POST", `/v1/providers/${opts.provider ?? "db_relational"}/connections`, { headers, body });
}

/** Creates and answers the Connection object (expects 201). */
export async function newConnection(app: TestApp, key: Bearer, opts: Parameters<typeof createConnection>[2] = {}): Promise<{ id: string; [k: string]: unknown }> {
  const res = await createConnection(app, key, opts);
  if (res.status !== 201) throw new Error(`create connection: ${res.status} ${await res.text()}`);
  return json(res);
}
