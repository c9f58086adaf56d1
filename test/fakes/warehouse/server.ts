// A test double for the cloud warehouse's HTTP endpoint, speaking the protocol snowflake-sdk
// uses (see README.md): login (password or key-pair JWT), queries with binds and JSON results
// split into chunks past a size, chunk downloads, logout and telemetry. Data lives in DuckDB
// (engine.ts). Tests change data through `exec` (the admin API) or through the driver's SQL.
import { createHash, createPublicKey, verify, type KeyObject } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { accessDenied } from "./ddl.ts";
import { WarehouseEngine } from "./engine.ts";
import { WarehouseSqlError } from "./errors.ts";
import type { Bind } from "./sql.ts";

export interface FakeWarehouseUser {
  user: string;
  password?: string;
  /** PEM of the public key registered for key-pair login (`ALTER USER … SET RSA_PUBLIC_KEY`). */
  publicKeyPem?: string;
  /** A role with no grant to create or write anything: every write fails with the warehouse's 003001. */
  readOnly?: boolean;
}

export interface FakeWarehouseOptions {
  account?: string;
  database?: string;
  users?: FakeWarehouseUser[];
  /** Rows sent inline in the query response; the rest go to chunks of `chunkRows`. */
  inlineRows?: number;
  chunkRows?: number;
  /** Called with one line per request (development aid: see what the driver sends). */
  log?: (line: string) => void;
}

export interface LoggedRequest {
  method: string;
  path: string;
  body: unknown;
}

interface Session {
  user: string;
  database: string;
  schema: string;
  warehouse: string | null;
  role: string;
  parameters: Map<string, string>;
}

const DEFAULT_PARAMETERS: Record<string, string | number | boolean> = {
  TIMEZONE: "America/Los_Angeles",
  TIMESTAMP_OUTPUT_FORMAT: "YYYY-MM-DD HH24:MI:SS.FF3 TZHTZM",
  TIMESTAMP_NTZ_OUTPUT_FORMAT: "YYYY-MM-DD HH24:MI:SS.FF3",
  TIMESTAMP_LTZ_OUTPUT_FORMAT: "",
  TIMESTAMP_TZ_OUTPUT_FORMAT: "",
  DATE_OUTPUT_FORMAT: "YYYY-MM-DD",
  TIME_OUTPUT_FORMAT: "HH24:MI:SS",
  BINARY_OUTPUT_FORMAT: "HEX",
  CLIENT_SESSION_KEEP_ALIVE: false,
  QUERY_CONTEXT_CACHE_SIZE: 5,
};

const ok = (data: unknown) => ({ success: true, code: null, message: null, data });
const failure = (code: string, message: string, data: Record<string, unknown> = {}) => ({ success: false, code, message, data: { errorCode: code, ...data } });

function fingerprint(key: KeyObject): string {
  return "SHA256:" + createHash("sha256").update(key.export({ format: "der", type: "spki" })).digest("base64");
}

/** Verifies the key-pair login token the way the service does: RS256, issuer, subject, expiry. */
function verifyJwt(token: string, account: string, user: string, publicKey: KeyObject): boolean {
  const [header, payload, signature] = token.split(".");
  if (!header || !payload || !signature) return false;
  const head = JSON.parse(Buffer.from(header, "base64url").toString()) as { alg?: string };
  if (head.alg !== "RS256") return false;
  if (!verify("RSA-SHA256", Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, "base64url"))) return false;
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as { iss?: string; sub?: string; exp?: number };
  const subject = `${account.toUpperCase()}.${user.toUpperCase()}`;
  // snowflake-sdk writes exp in milliseconds, other clients in seconds: accept both.
  const expMs = (claims.exp ?? 0) > 1e12 ? claims.exp! : (claims.exp ?? 0) * 1000;
  return claims.sub === subject && claims.iss === `${subject}.${fingerprint(publicKey)}` && expMs > Date.now();
}

export async function startFakeWarehouse(options: FakeWarehouseOptions = {}) {
  const account = options.account ?? "VECSYNC_TEST";
  const database = options.database ?? "VECSYNC_TEST_DB";
  const inlineRows = options.inlineRows ?? 1000;
  const chunkRows = options.chunkRows ?? 2000;
  const engine = await WarehouseEngine.create(database);
  const users = new Map<string, FakeWarehouseUser>();
  const sessions = new Map<string, Session>();
  const chunks = new Map<string, Buffer>();
  const requests: LoggedRequest[] = [];
  let queryCounter = 0;
  const addUser = (u: FakeWarehouseUser) => users.set(u.user.toUpperCase(), u);
  for (const u of options.users ?? [{ user: "tester", password: "secret" }]) addUser(u);

  function login(url: URL, body: { data?: Record<string, unknown> }) {
    const data = body.data ?? {};
    const name = String(data.LOGIN_NAME ?? "");
    const user = users.get(name.toUpperCase());
    const accountName = String(data.ACCOUNT_NAME ?? "");
    if (data.AUTHENTICATOR === "SNOWFLAKE_JWT") {
      const key = user?.publicKeyPem ? createPublicKey(user.publicKeyPem) : null;
      if (!key || !verifyJwt(String(data.TOKEN ?? ""), accountName, name, key)) return failure("390144", "JWT token is invalid.");
    } else if (!user || user.password === undefined || user.password !== data.PASSWORD) {
      return failure("390100", "Incorrect username or password was specified.", { nextAction: "RETRY_LOGIN", authnMethod: "USERNAME_PASSWORD" });
    }
    const token = crypto.randomUUID();
    const session: Session = {
      user: name.toUpperCase(),
      database: url.searchParams.get("databaseName") ?? database,
      schema: url.searchParams.get("schemaName") ?? "PUBLIC",
      warehouse: url.searchParams.get("warehouse"),
      role: url.searchParams.get("roleName") ?? "PUBLIC",
      parameters: new Map(),
    };
    sessions.set(token, session);
    return ok({
      token,
      masterToken: `master-${token}`,
      sessionId: sessions.size,
      validityInSeconds: 3600,
      masterValidityInSeconds: 14400,
      displayUserName: session.user,
      serverVersion: "fake-duckdb",
      parameters: parameterList(session),
      sessionInfo: { databaseName: session.database, schemaName: session.schema, warehouseName: session.warehouse, roleName: session.role },
    });
  }

  const parameterList = (session: Session) =>
    Object.entries({ ...DEFAULT_PARAMETERS, ...Object.fromEntries(session.parameters) }).map(([name, value]) => ({ name, value }));

  async function query(base: string, session: Session, body: { sqlText?: string; bindings?: Record<string, Bind> }) {
    const queryId = `01fa${(++queryCounter).toString(16).padStart(12, "0")}-fake`;
    try {
      const denied = users.get(session.user)?.readOnly ? accessDenied(String(body.sqlText ?? "").trim(), session.database) : null;
      if (denied) throw denied;
      const result = await engine.query(String(body.sqlText ?? ""), body.bindings ?? {}, session.parameters);
      const inline = result.rows.slice(0, inlineRows);
      const rest = result.rows.slice(inlineRows);
      const chunkList = [];
      for (let i = 0; i < rest.length; i += chunkRows) {
        const rows = rest.slice(i, i + chunkRows);
        const id = `${queryId}-${i / chunkRows}`;
        const raw = Buffer.from(rows.map((r) => JSON.stringify(r)).join(","));
        chunks.set(id, gzipSync(raw));
        chunkList.push({ url: `${base}/__results/${id}`, rowCount: rows.length, uncompressedSize: raw.length, compressedSize: chunks.get(id)!.length });
      }
      return ok({
        parameters: parameterList(session),
        rowtype: result.rowtype,
        rowset: inline,
        total: result.rows.length,
        returned: result.rows.length,
        queryId,
        finalDatabaseName: session.database,
        finalSchemaName: session.schema,
        finalWarehouseName: session.warehouse,
        finalRoleName: session.role,
        numberOfBinds: Object.keys(body.bindings ?? {}).length,
        arrayBindSupported: false,
        statementTypeId: result.statementTypeId,
        version: 1,
        sendResultTime: Date.now(),
        queryResultFormat: "json",
        queryContext: { entries: [] },
        ...(chunkList.length > 0 ? { chunks: chunkList, chunkHeaders: {} } : {}),
      });
    } catch (err) {
      if (err instanceof WarehouseSqlError) return failure(err.code, err.message, { sqlState: err.sqlState, queryId, internalError: false, type: "COMPILATION" });
      throw err;
    }
  }

  async function readBody(req: Request): Promise<unknown> {
    let bytes = Buffer.from(await req.arrayBuffer());
    if (bytes.length === 0) return null;
    if (req.headers.get("content-encoding") === "gzip" || (bytes[0] === 0x1f && bytes[1] === 0x8b)) bytes = gunzipSync(bytes);
    return JSON.parse(bytes.toString("utf8"));
  }

  function reply(req: Request, payload: unknown): Response {
    const json = JSON.stringify(payload);
    if (json.length > 1024 && /gzip/.test(req.headers.get("accept-encoding") ?? "")) {
      return new Response(gzipSync(json), { headers: { "content-type": "application/json", "content-encoding": "gzip" } });
    }
    return new Response(json, { headers: { "content-type": "application/json" } });
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const base = `http://${url.host}`;
      if (req.method === "GET" && url.pathname.startsWith("/__results/")) {
        const chunk = chunks.get(url.pathname.slice("/__results/".length));
        requests.push({ method: "GET", path: url.pathname, body: null });
        if (!chunk) return new Response("<Error><Code>NoSuchKey</Code></Error>", { status: 404, headers: { "content-type": "application/xml" } });
        return new Response(chunk, { headers: { "content-type": "application/octet-stream", "content-encoding": "gzip" } });
      }
      const body = (await readBody(req)) as Record<string, unknown> | null;
      requests.push({ method: req.method, path: url.pathname + url.search, body });
      options.log?.(`${req.method} ${url.pathname}${url.search} ${JSON.stringify(body)?.slice(0, 2000)}`);
      if (url.pathname === "/session/v1/login-request") return reply(req, login(url, (body ?? {}) as { data?: Record<string, unknown> }));
      const token = /Snowflake Token="([^"]+)"/.exec(req.headers.get("authorization") ?? "")?.[1];
      const session = token ? sessions.get(token) : undefined;
      if (!session) return reply(req, failure("390104", "Authentication token is invalid."));
      if (url.pathname === "/queries/v1/query-request") return reply(req, await query(base, session, (body ?? {}) as { sqlText?: string }));
      if (url.pathname === "/session" && url.searchParams.get("delete") === "true") {
        sessions.delete(token!);
        return reply(req, ok(null));
      }
      if (url.pathname === "/telemetry/send") return reply(req, ok("Log Received"));
      if (url.pathname === "/session/heartbeat" || url.pathname === "/queries/v1/abort-request") return reply(req, ok(null));
      return reply(req, failure("000000", `the fake warehouse does not implement ${req.method} ${url.pathname}`));
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    account,
    database,
    engine,
    requests,
    addUser,
    /** The admin API: runs a script (`;`-separated, BEGIN … COMMIT allowed) outside any session. */
    exec: (script: string) => engine.exec(script),
    /** Sessions currently open (a driver that closes cleanly leaves none). */
    openSessions: () => sessions.size,
    async close() {
      server.stop(true);
      await engine.close();
    },
    async [Symbol.asyncDispose]() {
      await this.close();
    },
  };
}

export type FakeWarehouse = Awaited<ReturnType<typeof startFakeWarehouse>>;
