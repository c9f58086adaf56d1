// snowflake-sdk for a warehouse source: connection options from the credentials (password or
// key-pair JWT login), settings for a closed network, a session pinned so that text and hashes
// are stable, and a promise wrapper around `execute` answering rows as arrays with column types.
import { createPrivateKey } from "node:crypto";
import snowflake from "snowflake-sdk";
import { DriverError } from "../../shared/errors.ts";
import { toDriverError, type Secrets } from "./warehouse-errors.ts";

export interface WarehouseCredentials {
  authMethod: "password" | "key_pair";
  account: string;
  user: string;
  password?: string;
  /** PEM (PKCS#8 or PKCS#1); an encrypted key is not supported (docs/api.md#credentials has no passphrase). */
  privateKey?: string;
  warehouse?: string;
  database?: string;
  /** Default PUBLIC (docs/api.md#credentials). */
  schema?: string;
  role?: string;
}

export interface WarehouseSourceOptions {
  /** VECSYNC_WAREHOUSE_URL (config.warehouseUrl): replaces the URL derived from `account`. */
  url?: string | null;
  /** Upper bound on the delay between a committed change and its pickup (VECSYNC_CDC_POLL_MS). */
  pollMs?: number;
  /** More changed keys than this in one batch → `allRowsChanged` (a hash resync is cheaper). */
  maxChangedKeys?: number;
}

// The driver probes cloud metadata addresses at login to report its platform: off, both for a
// closed network and because docs/api.md#host-guard refuses those addresses anyway. The per-login
// "connection shape" telemetry event is off too. (These are the SDK's own switches, read from
// the environment at each login; we set them, we never read ours from here.)
process.env.SNOWFLAKE_DISABLE_PLATFORM_DETECTION = "true";
process.env.SF_TELEMETRY_DISABLE_CONNECTION_SHAPE = "true";
let configured = false;

function configureOnce(url: URL | null) {
  if (configured) return;
  configured = true;
  // OCSP is a process-wide switch in the SDK. A plain-HTTP or loopback override URL is a test
  // server: revocation checks there would only try to reach the internet.
  const testUrl = url !== null && (url.protocol === "http:" || ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname));
  snowflake.configure({ logLevel: "OFF", additionalLogToConsole: false, ...(testUrl ? { disableOCSPChecks: true } : {}) });
}

/** Session settings fixed for every connection: values rendered by CAST(… AS VARCHAR) in hashes depend on them. */
const SESSION_SETTINGS = [
  "TIMEZONE = 'UTC'",
  "TIMESTAMP_OUTPUT_FORMAT = 'YYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM'",
  "TIMESTAMP_NTZ_OUTPUT_FORMAT = 'YYYY-MM-DD HH24:MI:SS.FF9'",
  "TIMESTAMP_LTZ_OUTPUT_FORMAT = 'YYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM'",
  "TIMESTAMP_TZ_OUTPUT_FORMAT = 'YYYY-MM-DD HH24:MI:SS.FF9 TZH:TZM'",
  "DATE_OUTPUT_FORMAT = 'YYYY-MM-DD'",
  "TIME_OUTPUT_FORMAT = 'HH24:MI:SS.FF9'",
  "BINARY_OUTPUT_FORMAT = 'HEX'",
  "QUERY_TAG = 'vecsync'",
];

export function connectionOptions(credentials: WarehouseCredentials, url: URL | null): snowflake.ConnectionOptions {
  const common = {
    account: credentials.account,
    username: credentials.user,
    warehouse: credentials.warehouse,
    database: credentials.database,
    schema: credentials.schema ?? "PUBLIC",
    role: credentials.role,
    application: "vecsync",
    clientSessionKeepAlive: false,
    // With fetchAsString the SDK otherwise answers SQL NULL as the text "NULL".
    representNullAsStringNull: false,
    ...(url ? { accessUrl: url.origin } : {}),
    // Fail a login within seconds rather than the SDK's default of minutes of retries.
    sfRetryMaxLoginRetries: 2,
  } as snowflake.ConnectionOptions;
  if (credentials.authMethod === "key_pair") {
    if (!credentials.privateKey) throw new DriverError("key_pair login needs a private_key", { retryable: false });
    let pem: string;
    try {
      pem = createPrivateKey({ key: credentials.privateKey, format: "pem" }).export({ format: "pem", type: "pkcs8" }).toString();
    } catch {
      throw new DriverError("private_key is not a readable unencrypted PEM private key", { retryable: false });
    }
    return { ...common, authenticator: "SNOWFLAKE_JWT", privateKey: pem };
  }
  if (credentials.password === undefined) throw new DriverError("password login needs a password", { retryable: false });
  return { ...common, password: credentials.password };
}

export interface ColumnInfo {
  name: string;
  /** The SDK's lower-case type: fixed, real, text, boolean, date, timestamp_ntz, variant, … */
  type: string;
  scale: number;
}

export interface QueryResult {
  columns: ColumnInfo[];
  rows: unknown[][];
}

/** One lazily opened session; reopened when it drops. */
export class WarehouseClient {
  private connection: snowflake.Connection | null = null;
  private connecting: Promise<snowflake.Connection> | null = null;
  readonly secrets: Secrets;

  constructor(
    readonly credentials: WarehouseCredentials,
    readonly url: URL | null,
  ) {
    configureOnce(url);
    this.secrets = { password: credentials.password, privateKey: credentials.privateKey };
  }

  private connect(): Promise<snowflake.Connection> {
    if (this.connection?.isUp()) return Promise.resolve(this.connection);
    this.connecting ??= this.open().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async open(): Promise<snowflake.Connection> {
    const connection = snowflake.createConnection(connectionOptions(this.credentials, this.url));
    await new Promise<void>((resolve, reject) => connection.connect((err) => (err ? reject(toDriverError(err, this.secrets, "login")) : resolve())));
    this.connection = connection;
    try {
      await this.execute(`ALTER SESSION SET ${SESSION_SETTINGS.join(" ")}`, [], "pin session");
    } catch (err) {
      await this.close();
      throw err;
    }
    return connection;
  }

  async execute(sqlText: string, binds: (string | number | boolean | null)[], operation: string): Promise<QueryResult> {
    const connection = await this.connect();
    return new Promise<QueryResult>((resolve, reject) => {
      connection.execute({
        sqlText,
        binds: binds as snowflake.Binds,
        rowMode: "array",
        // Raw text for numbers (no rounding past 2^53), semi-structured values and binary.
        fetchAsString: ["Number", "JSON", "Buffer"],
        complete: (err, statement, rows) => {
          if (err) return reject(toDriverError(err, this.secrets, operation));
          const columns = (statement.getColumns() ?? []).map((c) => ({ name: c.getName(), type: String(c.getType()).toLowerCase(), scale: c.getScale() ?? 0 }));
          resolve({ columns, rows: (rows ?? []) as unknown[][] });
        },
      });
    });
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = null;
    if (!connection?.isUp()) return;
    await new Promise<void>((resolve) => connection.destroy(() => resolve()));
  }
}
