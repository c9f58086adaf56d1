// The demo's setup calls, in the order a newcomer makes them: sign in, organization, embedding
// provider, connection, vector table.
import { existsSync, readFileSync } from "node:fs";
import { shellVar, type DemoApi } from "./client.ts";
import type { DemoProvider } from "./options.ts";
import type { Output } from "./output.ts";
import type { DemoSource } from "./source.ts";

export const DEMO_EMAIL = "demo@example.com";

/** Codes are mailed after the otp answer (it must not reveal whether the address is known). */
const CODE_WAIT_MS = 10_000;

async function codeFromOutbox(outbox: string, email: string): Promise<string> {
  const deadline = Date.now() + CODE_WAIT_MS;
  while (Date.now() < deadline) {
    if (existsSync(outbox)) {
      const mails = readFileSync(outbox, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { to: string; text: string });
      const code = mails.filter((m) => m.to === email).at(-1)?.text.match(/\b(\d{6})\b/)?.[1];
      if (code) return code;
    }
    await Bun.sleep(50);
  }
  throw new Error(`no sign-in code for ${email} in ${outbox} after ${CODE_WAIT_MS / 1000} s`);
}

export async function signIn(api: DemoApi, out: Output, outbox: string): Promise<void> {
  out.step("Sign in with a one-time code");
  await api.call("POST", "/v1/auth/otp", { auth: "none", body: { email: DEMO_EMAIL } });
  const code = await codeFromOutbox(outbox, DEMO_EMAIL);
  out.note(`# the 6-digit code arrives by e-mail; without SMTP it is appended to ${outbox}`);
  out.note(`# CODE=<the code>   (this run: ${code})`);
  const tokens = await api.call<{ access_token: string }>("POST", "/v1/auth/verify", { auth: "none", body: { email: DEMO_EMAIL, code }, shown: { email: DEMO_EMAIL, code: shellVar("CODE") } });
  api.token = tokens.access_token;
  out.note("# TOKEN=<access_token from the answer>   (a JWT, valid one hour)");
}

export async function createOrganization(api: DemoApi, out: Output): Promise<string> {
  out.step("Create an organization (answers its first API key)");
  const created = await api.call<{ organization: { id: string; name: string }; api_key: string }>("POST", "/v1/organizations", { auth: "token", body: { name: "acme-demo" } });
  api.apiKey = created.api_key;
  out.note(`# VECSYNC_API_KEY=<api_key from the answer>   organization ${created.organization.id}`);
  out.note("# from here on every call uses the API key");
  return created.organization.id;
}

export async function createProvider(api: DemoApi, out: Output, provider: DemoProvider): Promise<string> {
  const offline = provider.provider === "local";
  out.step(`Create an embedding provider (${offline ? "local: runs inside vecsync, offline, no key" : provider.provider})`);
  const body = { name: `demo-${provider.provider}`, provider: provider.provider, ...(offline ? {} : { api_key: provider.apiKey }) };
  const shown = offline ? body : { ...body, api_key: shellVar("EMBEDDING_API_KEY") };
  const created = await api.call<{ id: string }>("POST", "/v1/embedding-providers", { auth: "key", body, shown });
  out.note(`# provider ${created.id}`);
  return created.id;
}

export async function createConnection(api: DemoApi, out: Output, source: DemoSource): Promise<string> {
  out.step("Connect the source database");
  out.note(`# ${source.description}`);
  const body = { name: "demo-source", mode: "managed", credentials: source.credentials };
  const created = await api.call<{ id: string; status: string }>("POST", `/v1/providers/${source.provider}/connections`, { auth: "key", body, shown: { ...body, credentials: source.shownCredentials } });
  out.note(`# connection ${created.id}`);
  return created.id;
}

export type DemoTable = { id: string; name: string };

export async function createVectorTable(api: DemoApi, out: Output, source: DemoSource, ids: { connectionId: string; providerId: string }, provider: DemoProvider): Promise<DemoTable> {
  out.step("Create a vector table: name and description embedded, category, price and in_stock to filter on");
  const col = source.column;
  const body = {
    name: "products",
    connection_id: ids.connectionId,
    embedding_provider_id: ids.providerId,
    source_table: source.table,
    primary_key_column: col("id"),
    columns: [
      { name: col("name"), role: "embedding", ordinal: 1 },
      { name: col("description"), role: "embedding", ordinal: 2 },
      { name: col("category"), role: "metadata", filter_type: "keyword" },
      { name: col("price"), role: "metadata", filter_type: "float" },
      { name: col("in_stock"), role: "metadata", filter_type: "boolean" },
    ],
    embedding_model: provider.model,
    embedding_dimensions: provider.dimensions,
    sync_mode: "batch",
  };
  const created = await api.call<DemoTable & { sync_status: string }>("POST", "/v1/vector-tables", { auth: "key", body });
  out.note(`# vector table ${created.id}, status ${created.sync_status}`);
  return { id: created.id, name: created.name };
}
