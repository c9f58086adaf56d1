// The only reader of the environment (STYLE). Flags win over variables, variables over defaults.
// A bad value stops start-up with one line naming the flag or variable.
import { type } from "arktype";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import { ArgsError, parseFlags as parseCommandLine } from "./shared/args.ts";
import { parseAddress, parseCidr, type Cidr } from "./shared/ip.ts";

/**
 * The least a given VECSYNC_JWT_SECRET may hold, in UTF-8 bytes: HS256 wants a key as long as its
 * hash (RFC 7518 3.2), and a short secret can be guessed offline from any one token.
 */
export const MIN_JWT_SECRET_BYTES = 32;

const Port = type("string.integer.parse").to("0 <= number.integer <= 65535");
const PositiveInt = type("string.integer.parse").to("number.integer > 0");
const NonNegativeInt = type("string.integer.parse").to("number.integer >= 0");
const Url = type("string.url");
const Text = type("string > 0");
const LogLevel = type("'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'");

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string;
  jwtSecret: string;
  masterKey: Buffer;
  smtpUrl: string | null;
  mailOutbox: string | null;
  embUrls: { emb_a: string | null; emb_b: string | null; emb_c: string | null };
  warehouseUrl: string | null;
  syncIntervalSec: number;
  /** Seconds between reconciling hash passes of a cdc table (VECSYNC_RECONCILE_INTERVAL). */
  reconcileIntervalSec: number;
  cdcPollMs: number;
  freeVectorBudget: number;
  /** Task handlers run at once in this process (VECSYNC_WORKERS). */
  workers: number;
  /** MiB of f32 vectors a collection keeps in memory before it turns compact (VECSYNC_FLOAT_MIRROR_MB); null: the store's default. */
  floatMirrorMb: number | null;
  /** Sign-in codes one client IP may request per 15 minutes (docs/api.md#rate-limits: 30); raised for benchmarks. */
  otpIpLimit: number;
  denyHosts: string[];
  allowHosts: string[];
  /** Reverse proxies whose X-Forwarded-For is believed (VECSYNC_TRUSTED_PROXIES; docs/security.md#behind-a-proxy); none by default. */
  trustedProxies: Cidr[];
  logLevel: typeof LogLevel.infer;
  /** Bearer token `GET /metrics` asks for (VECSYNC_METRICS_TOKEN); null = no credential (docs/operability.md#metrics). */
  metricsToken: string | null;
};

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/** Parses `--name value` and `--name=value` flags (node:util parseArgs, strict); unknown flags are an error. */
export function parseFlags(args: string[], known: readonly string[]): Record<string, string> {
  try {
    return parseCommandLine(args, { strings: known }).strings;
  } catch (err) {
    throw err instanceof ArgsError ? new ConfigError(err.message) : err;
  }
}

export const SERVE_FLAGS = ["port", "host", "data-dir"] as const;

function read<T>(source: string, raw: string, schema: { (v: unknown): unknown }, expected: string): T {
  const out = schema(raw);
  if (out instanceof type.errors) throw new ConfigError(`${source} must be ${expected} (got "${raw}")`);
  return out as T;
}

function optional<T>(env: Env, name: string, schema: { (v: unknown): unknown }, expected: string): T | null {
  const raw = env[name];
  if (raw === undefined || raw === "") return null;
  return read<T>(name, raw, schema, expected);
}

const list = (raw: string | undefined) => (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean);

/** Builds the configuration from flags and environment without touching the disk. */
export function loadConfig(flags: Record<string, string>, env: Env): Omit<Config, "jwtSecret" | "masterKey"> & {
  jwtSecret: string | null;
  masterKey: Buffer | null;
} {
  const pick = (flag: string, name: string) =>
    flags[flag] !== undefined ? { source: `--${flag}`, raw: flags[flag]! } : env[name] !== undefined ? { source: name, raw: env[name]! } : null;

  const port = pick("port", "VECSYNC_PORT");
  const host = pick("host", "VECSYNC_HOST");
  const dir = pick("data-dir", "VECSYNC_DATA_DIR");
  const dataDir = resolve(dir ? read<string>(dir.source, dir.raw, Text, "a path") : "./data");
  const masterKeyRaw = optional<string>(env, "VECSYNC_MASTER_KEY", Text, "a base64 32-byte key");
  let masterKey: Buffer | null = null;
  if (masterKeyRaw !== null) {
    masterKey = Buffer.from(masterKeyRaw, "base64");
    if (masterKey.length !== 32) throw new ConfigError(`VECSYNC_MASTER_KEY must be a base64 32-byte key (decodes to ${masterKey.length} bytes)`);
  }
  const smtpUrl = optional<string>(env, "VECSYNC_SMTP_URL", Url, "a URL such as smtp://user:pass@host:587");
  return {
    port: port ? read<number>(port.source, port.raw, Port, "an integer from 0 to 65535") : 8080,
    host: host ? read<string>(host.source, host.raw, Text, "a host name or address") : "127.0.0.1",
    dataDir,
    databaseUrl: optional<string>(env, "VECSYNC_DATABASE_URL", Url, "a file:, libsql:, http: or https: URL") ?? `file:${join(dataDir, "vecsync.db")}`,
    jwtSecret: jwtSecret(env),
    masterKey,
    smtpUrl,
    mailOutbox: optional<string>(env, "VECSYNC_MAIL_OUTBOX", Text, "a file path") ?? (smtpUrl ? null : join(dataDir, "outbox.jsonl")),
    embUrls: {
      emb_a: optional<string>(env, "VECSYNC_EMB_A_URL", Url, "a URL"),
      emb_b: optional<string>(env, "VECSYNC_EMB_B_URL", Url, "a URL"),
      emb_c: optional<string>(env, "VECSYNC_EMB_C_URL", Url, "a URL"),
    },
    warehouseUrl: optional<string>(env, "VECSYNC_WAREHOUSE_URL", Url, "a URL"),
    syncIntervalSec: optional<number>(env, "VECSYNC_SYNC_INTERVAL", PositiveInt, "a positive number of seconds") ?? 60,
    reconcileIntervalSec: optional<number>(env, "VECSYNC_RECONCILE_INTERVAL", PositiveInt, "a positive number of seconds") ?? 3600,
    cdcPollMs: optional<number>(env, "VECSYNC_CDC_POLL_MS", PositiveInt, "a positive number of milliseconds") ?? 1000,
    freeVectorBudget: optional<number>(env, "VECSYNC_FREE_VECTOR_BUDGET", PositiveInt, "a positive integer") ?? 1_000_000,
    workers: optional<number>(env, "VECSYNC_WORKERS", PositiveInt, "a positive integer") ?? 2,
    floatMirrorMb: optional<number>(env, "VECSYNC_FLOAT_MIRROR_MB", NonNegativeInt, "a whole number of MiB (0: every collection compact)"),
    otpIpLimit: optional<number>(env, "VECSYNC_OTP_IP_LIMIT", PositiveInt, "a positive integer") ?? 30,
    denyHosts: list(env.VECSYNC_DENY_HOSTS),
    trustedProxies: list(env.VECSYNC_TRUSTED_PROXIES).map(proxyEntry),
    allowHosts: list(env.VECSYNC_ALLOW_HOSTS),
    logLevel: optional<typeof LogLevel.infer>(env, "VECSYNC_LOG_LEVEL", LogLevel, "one of fatal, error, warn, info, debug, trace, silent") ?? "info",
    metricsToken: optional<string>(env, "VECSYNC_METRICS_TOKEN", Text, "a non-empty token"),
  };
}

function jwtSecret(env: Env): string | null {
  const secret = optional<string>(env, "VECSYNC_JWT_SECRET", Text, "a non-empty secret");
  if (secret !== null && Buffer.byteLength(secret) < MIN_JWT_SECRET_BYTES) {
    throw new ConfigError(`VECSYNC_JWT_SECRET must be at least ${MIN_JWT_SECRET_BYTES} bytes (got ${Buffer.byteLength(secret)}); e.g. openssl rand -base64 32`);
  }
  return secret;
}

function proxyEntry(entry: string): Cidr {
  const text = entry.replace(/^\[|\]$/g, "");
  const address = text.includes("/") ? null : parseAddress(text);
  const cidr = address ? { address, prefix: address.bytes.length * 8 } : parseCidr(text);
  if (!cidr) throw new ConfigError(`VECSYNC_TRUSTED_PROXIES: "${entry}" is neither a CIDR nor an address`);
  return cidr;
}

/** Reads a generated secret from the data dir, creating it (mode 0600) on first use. */
function generatedSecret(dataDir: string, file: string): string {
  const path = join(dataDir, file);
  if (!existsSync(path)) {
    writeFileSync(path, randomBytes(32).toString("base64") + "\n", { mode: 0o600, flag: "wx" });
  }
  chmodSync(path, 0o600);
  return readFileSync(path, "utf8").trim();
}

/** Completes the configuration: creates the data dir and any secret not given by the environment. */
export function resolveConfig(flags: Record<string, string>, env: Env): Config {
  const partial = loadConfig(flags, env);
  mkdirSync(partial.dataDir, { recursive: true, mode: 0o700 }); // docs/running.md#one-process
  return {
    ...partial,
    // docs/running.md#configuration: the JWT secret is used as its UTF-8 bytes, whether given or generated.
    jwtSecret: partial.jwtSecret ?? generatedSecret(partial.dataDir, "jwt.secret"),
    masterKey: partial.masterKey ?? Buffer.from(generatedSecret(partial.dataDir, "master.key"), "base64"),
  };
}
