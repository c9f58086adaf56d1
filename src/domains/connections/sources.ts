// Opens the source a connection points at: decrypt its credentials, vet the host (docs/api.md#host-guard),
// construct the driver. Everything that reads a source (connection tests, vector-table schema
// reads, backfill and sync tasks) goes through `openSource`, so none can skip the host guard.
import type { Services } from "../../services.ts";
import { DriverError } from "../../shared/errors.ts";
import { hostPolicy, systemResolver, vetHost, type Resolver } from "../../shared/host-guard.ts";
import { createPostgresSource, type PostgresCredentials, type PostgresSourceOptions } from "../../drivers/sources/postgres.ts";
import { createWarehouseSource, type WarehouseCredentials as WarehouseDriverCredentials } from "../../drivers/sources/warehouse.ts";
import type { SourceConnector } from "../../drivers/sources/types.ts";
import { openRelational, openWarehouse, type RelationalCredentials, type WarehouseCredentials } from "./credentials.ts";
import type { ConnectionProvider } from "./schemas.ts";

/** What `openSource` needs of a connection row (the connections table's row fits). */
export type SealedConnection = { provider: ConnectionProvider; credentials: string };

export type OpenSourceOptions = {
  /** Seconds to wait for the database to accept the connection. */
  connectTimeoutSec?: number;
  maxConnections?: number;
  /** For tests of the guard: answers host names instead of the system resolver. */
  resolver?: Resolver;
};

/** libpq's default: TLS when the server offers it. */
const DEFAULT_SSL_MODE = "prefer";

/**
 * The driver's credentials for a relational connection, its host resolved and vetted: whatever
 * connects to the database (a source, a platform store) dials the address checked here.
 */
export async function vettedPostgres(services: Pick<Services, "config">, credentials: RelationalCredentials, resolver: Resolver = systemResolver): Promise<PostgresCredentials> {
  const vetted = await vetHost(credentials.host, hostPolicy(services.config), resolver);
  return {
    host: vetted.address,
    port: credentials.port,
    database: credentials.database,
    user: credentials.user,
    password: credentials.password,
    sslMode: credentials.ssl_mode ?? DEFAULT_SSL_MODE,
    ...(vetted.servername ? { tlsServername: vetted.servername } : {}),
  };
}

async function openRelationalSource(services: Pick<Services, "config" | "secrets">, credentials: RelationalCredentials, options: OpenSourceOptions): Promise<SourceConnector> {
  const driverOptions: PostgresSourceOptions = {};
  if (options.connectTimeoutSec !== undefined) driverOptions.connectTimeoutSec = options.connectTimeoutSec;
  if (options.maxConnections !== undefined) driverOptions.maxConnections = options.maxConnections;
  return createPostgresSource(await vettedPostgres(services, credentials, options.resolver), driverOptions);
}

/** The driver's credentials for a warehouse connection: whatever connects to it (a source, a platform store) uses these. */
export function warehouseDriverCredentials(credentials: WarehouseCredentials): WarehouseDriverCredentials {
  return {
    authMethod: credentials.auth_method,
    account: credentials.account,
    user: credentials.user,
    ...(credentials.password !== undefined ? { password: credentials.password } : {}),
    ...(credentials.private_key !== undefined ? { privateKey: credentials.private_key } : {}),
    ...(credentials.warehouse !== undefined ? { warehouse: credentials.warehouse } : {}),
    ...(credentials.database !== undefined ? { database: credentials.database } : {}),
    schema: credentials.schema,
    ...(credentials.role !== undefined ? { role: credentials.role } : {}),
  };
}

/**
 * The warehouse's address is derived from the account (`<account>.snowflakecomputing.com`, a public
 * name the guard has nothing to say about) or set by the operator (VECSYNC_WAREHOUSE_URL).
 */
function openWarehouseSource(services: Pick<Services, "config">, credentials: WarehouseCredentials): SourceConnector {
  return createWarehouseSource(warehouseDriverCredentials(credentials), { url: services.config.warehouseUrl, pollMs: services.config.cdcPollMs });
}

/**
 * A SourceConnector for the connection; the caller closes it. A refused host throws a 400
 * `validation_error` AppError; a name that does not resolve, a DriverError.
 */
export async function openSource(services: Pick<Services, "config" | "secrets">, connection: SealedConnection, options: OpenSourceOptions = {}): Promise<SourceConnector> {
  switch (connection.provider) {
    case "db_relational":
      return openRelationalSource(services, openRelational(services.secrets, connection.credentials), options);
    case "db_warehouse":
      return openWarehouseSource(services, openWarehouse(services.secrets, connection.credentials));
  }
}
