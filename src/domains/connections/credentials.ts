// Credentials per provider (docs/api.md#credentials): checked, defaulted, sealed for storage, opened for the
// drivers. A credentials object holds secrets, so no message here ever carries a value: arktype's
// "(was …)" suffix is cut, and the PEM check answers in fixed words.
import { createPrivateKey } from "node:crypto";
import { type } from "arktype";
import type { SecretBox } from "../../shared/secrets.ts";
import { validationError, type ErrorDetail } from "../../shared/errors.ts";
import { issuesOf } from "../../shared/validate.ts";
import { checkHostSpelling, isValidHost, type HostPolicy } from "../../shared/host-guard.ts";
import type { ConnectionProvider } from "./schemas.ts";

export const CREDENTIALS_PURPOSE = "connection.credentials";

const Text = type("1 <= string <= 1000");
const Secret = type("1 <= string <= 1000");
/** A 4096-bit RSA key in PEM is about 3.3 kB; leave room, but not for anything else. */
const Pem = type("1 <= string <= 20000");
export const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] as const;

export const RelationalShape = type({
  "+": "reject",
  host: "1 <= string <= 255",
  "port?": "1 <= number.integer <= 65535",
  database: Text,
  user: Text,
  password: Secret,
  "ssl_mode?": type.enumerated(...SSL_MODES),
});

/** Snowflake-style account identifiers (`orgname-account`, `xy12345.us-east-2.aws`): they become a host name. */
const Account = type(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$/).describe("an account identifier (letters, digits, '-', '_', '.')");

export const WarehouseShape = type({
  "+": "reject",
  auth_method: "'password' | 'key_pair'",
  account: Account,
  user: Text,
  "password?": Secret,
  "private_key?": Pem,
  "warehouse?": Text,
  "database?": Text,
  "schema?": Text,
  "role?": Text,
});

export type RelationalCredentials = Omit<typeof RelationalShape.infer, "port"> & { port: number };
export type WarehouseCredentials = Omit<typeof WarehouseShape.infer, "schema"> & { schema: string };
export type Credentials = RelationalCredentials | WarehouseCredentials;
/** What a client sends: either provider's object, defaults left out. */
export type CredentialsInput = typeof RelationalShape.inferIn | typeof WarehouseShape.inferIn;

const PREFIX = "credentials";

/** arktype's issues without the offending value, under `credentials.`. */
function shapeIssues(errors: InstanceType<typeof type.errors>): ErrorDetail[] {
  return issuesOf(errors).map((d) => ({ path: d.path ? `${PREFIX}.${d.path}` : PREFIX, message: d.message.replace(/\s*\(was [\s\S]*\)$/, "") }));
}

/** Why a PEM text is not a usable key-pair sign-in key; null when it is one. */
function privateKeyProblem(pem: string): string | null {
  try {
    const key = createPrivateKey({ key: pem, format: "pem" });
    return key.asymmetricKeyType === "rsa" ? null : "must be an RSA private key (key-pair sign-in uses RSA)";
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_MISSING_PASSPHRASE") return "is encrypted with a passphrase; provide the key unencrypted";
    return "must be a PEM-encoded private key";
  }
}

/** Stored as unencrypted PKCS#8 PEM, whatever PEM flavour (PKCS#1 or #8) was sent. */
const pkcs8 = (pem: string) => createPrivateKey({ key: pem, format: "pem" }).export({ type: "pkcs8", format: "pem" }).toString();

function relational(raw: unknown, policy: HostPolicy): RelationalCredentials {
  const out = RelationalShape(raw);
  if (out instanceof type.errors) throw validationError(shapeIssues(out));
  if (!isValidHost(out.host)) throw validationError([{ path: `${PREFIX}.host`, message: "must be a host name or an IP address (no port, path or URL)" }]);
  checkHostSpelling(out.host, policy);
  return { ...out, port: out.port ?? 5432 };
}

function warehouse(raw: unknown): WarehouseCredentials {
  const out = WarehouseShape(raw);
  if (out instanceof type.errors) throw validationError(shapeIssues(out));
  const problems: ErrorDetail[] = [];
  const needs = (field: "password" | "private_key", method: string) => problems.push({ path: `${PREFIX}.${field}`, message: `is required when auth_method is ${method}` });
  const unused = (field: "password" | "private_key", method: string) => problems.push({ path: `${PREFIX}.${field}`, message: `is only used with auth_method ${method}` });
  if (out.auth_method === "password") {
    if (out.password === undefined) needs("password", "password");
    if (out.private_key !== undefined) unused("private_key", "key_pair");
  } else {
    if (out.private_key === undefined) needs("private_key", "key_pair");
    if (out.password !== undefined) unused("password", "password");
    const problem = out.private_key === undefined ? null : privateKeyProblem(out.private_key);
    if (problem) problems.push({ path: `${PREFIX}.private_key`, message: problem });
  }
  if (problems.length > 0) throw validationError(problems);
  const privateKey = out.private_key === undefined ? {} : { private_key: pkcs8(out.private_key) };
  return { ...out, ...privateKey, schema: out.schema ?? "PUBLIC" };
}

/** Checks a credentials object for `provider` and applies the defaults (port 5432, schema PUBLIC). */
export function validateCredentials(provider: ConnectionProvider, raw: unknown, policy: HostPolicy): Credentials {
  return provider === "db_relational" ? relational(raw, policy) : warehouse(raw);
}

export const sealCredentials = (secrets: SecretBox, credentials: Credentials): string => secrets.seal(JSON.stringify(credentials), CREDENTIALS_PURPOSE);

export function openCredentials(secrets: SecretBox, sealed: string): Credentials {
  return JSON.parse(secrets.open(sealed, CREDENTIALS_PURPOSE)) as Credentials;
}

export function openRelational(secrets: SecretBox, sealed: string): RelationalCredentials {
  return JSON.parse(secrets.open(sealed, CREDENTIALS_PURPOSE)) as RelationalCredentials;
}

export function openWarehouse(secrets: SecretBox, sealed: string): WarehouseCredentials {
  return JSON.parse(secrets.open(sealed, CREDENTIALS_PURPOSE)) as WarehouseCredentials;
}

/** Every secret value in the credentials, to scrub from upstream error text. */
export function secretsOf(credentials: Credentials): string[] {
  const values = [(credentials as { password?: string }).password, (credentials as { private_key?: string }).private_key];
  return values.filter((v): v is string => typeof v === "string" && v.length > 0);
}
