// postgres.js options for a source connection: the pinned session settings, our value parsers,
// TLS by `ssl_mode`, and no type fetching (arrays stay text, and no extra round trip at connect).
import postgres from "postgres";
import { DriverError } from "../../shared/errors.ts";
import { POSTGRES_TYPES, SESSION_SETTINGS } from "./postgres-values.ts";

export interface PostgresCredentials {
  /**
   * The address to connect to. The connections service resolves and vets the user's host name
   * first (docs/api.md#host-guard) and passes the address it checked, so DNS cannot change it in between.
   */
  host: string;
  port?: number;
  database: string;
  user: string;
  password: string;
  /** libpq spelling: disable, allow, prefer, require, verify-ca, verify-full. */
  sslMode?: string;
  /** The user's host name, for TLS certificate checks when `host` is an address. */
  tlsServername?: string;
}

export interface PostgresSourceOptions {
  connectTimeoutSec?: number;
  maxConnections?: number;
}

type Ssl = boolean | "prefer" | "require" | { rejectUnauthorized: boolean; servername?: string; checkServerIdentity?: () => undefined };

function sslOption(credentials: PostgresCredentials): Ssl {
  const servername = credentials.tlsServername;
  switch (credentials.sslMode ?? "disable") {
    case "disable":
      return false;
    case "allow":
    case "prefer":
      return "prefer";
    case "require":
      return "require";
    case "verify-ca":
      // The chain is checked, the name is not: that is what libpq's verify-ca means.
      return { rejectUnauthorized: true, ...(servername ? { servername } : {}), checkServerIdentity: () => undefined };
    case "verify-full":
      return { rejectUnauthorized: true, ...(servername ? { servername } : {}) };
    default:
      throw new DriverError(`unknown ssl_mode ${JSON.stringify(credentials.sslMode)}`, { retryable: false });
  }
}

export function connectionOptions(credentials: PostgresCredentials, options: PostgresSourceOptions = {}) {
  return {
    // One-element lists: given a string, postgres.js splits it at ':' and ',' (its host:port
    // lists), which would dial an IPv6 address as something else than the vetted address. Its
    // runtime takes arrays for both (index.js parseOptions); its typings only declare strings.
    host: [credentials.host] as unknown as string,
    port: [credentials.port ?? 5432] as unknown as number,
    database: credentials.database,
    username: credentials.user,
    password: credentials.password,
    ssl: sslOption(credentials),
    max: options.maxConnections ?? 4,
    connect_timeout: options.connectTimeoutSec ?? 10,
    idle_timeout: 30,
    fetch_types: false,
    prepare: true,
    types: POSTGRES_TYPES,
    onnotice: () => {},
    connection: { ...SESSION_SETTINGS },
  };
}

export function connect(credentials: PostgresCredentials, options: PostgresSourceOptions = {}) {
  return postgres(connectionOptions(credentials, options));
}

export type SourceSql = ReturnType<typeof connect>;
