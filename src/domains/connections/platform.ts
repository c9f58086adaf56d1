// The platform vector stores of connections (docs/vector-tables.md#storage-modes): one store, with
// its own connection pool, per connection, opened on first use with the connection's credentials
// through the same host guard as its sources, replaced when the credentials change, and closed at
// shutdown. Which providers have a store is the wiring's choice (src/wiring.ts passes the openers):
// a provider without one answers a clear error, never a half-built table.
import type { Services } from "../../services.ts";
import { DriverError } from "../../shared/errors.ts";
import { openPgvectorStore } from "../../drivers/platform/pgvector.ts";
import { probePgvector, type PgvectorProbe } from "../../drivers/platform/pgvector-setup.ts";
import type { PlatformStores, PlatformVectorStore } from "../../drivers/platform/types.ts";
import { connect } from "../../drivers/sources/postgres-connect.ts";
import { connectWarehouseStore } from "../../drivers/platform/warehouse.ts";
import { openRelational, openWarehouse } from "./credentials.ts";
import type { ConnectionProvider } from "./schemas.ts";
import { vettedPostgres, warehouseDriverCredentials, type SealedConnection } from "./sources.ts";

type Opening = Pick<Services, "config" | "secrets">;

/** Opens a provider's platform store for a connection (credentials still sealed). */
export type PlatformOpener = (services: Opening, connection: SealedConnection) => Promise<PlatformVectorStore>;

export type PlatformOpeners = Partial<Record<ConnectionProvider, PlatformOpener>>;

/** Connections per store: searches, a fill's writes and a cdc apply at once, without crowding the customer's database. */
const POOL_SIZE = 4;

/** The pgvector store on a `db_relational` connection's database. */
export const openPgvector: PlatformOpener = async (services, connection) =>
  openPgvectorStore(await vettedPostgres(services, openRelational(services.secrets, connection.credentials)), { maxConnections: POOL_SIZE });

/**
 * The warehouse store on a `db_warehouse` connection, at the address its sources use (the account's,
 * or VECSYNC_WAREHOUSE_URL). Its tables live in <database>.VECSYNC (docs/platform-warehouse.md).
 */
export const openWarehousePlatform: PlatformOpener = async (services, connection) =>
  connectWarehouseStore(warehouseDriverCredentials(openWarehouse(services.secrets, connection.credentials)), { url: services.config.warehouseUrl });

/** For a connection test: what the database offers of pgvector, over one short-lived connection. */
export async function pgvectorOf(services: Opening, connection: SealedConnection, connectTimeoutSec: number): Promise<PgvectorProbe> {
  const sql = connect(await vettedPostgres(services, openRelational(services.secrets, connection.credentials)), { maxConnections: 1, connectTimeoutSec });
  try {
    return await probePgvector(sql);
  } finally {
    await sql.end({ timeout: 5 }).catch(() => undefined);
  }
}

type Entry = { sealed: string; store: Promise<PlatformVectorStore> };

const isProvider = (provider: string, openers: PlatformOpeners): provider is ConnectionProvider => Object.hasOwn(openers, provider);

export function platformStores(services: Opening, openers: PlatformOpeners): PlatformStores {
  const open = new Map<string, Entry>();
  const release = (entry: Entry) => void entry.store.then((s) => s.close()).catch(() => undefined);
  return {
    supports: (provider) => isProvider(provider, openers) && openers[provider] !== undefined,
    async of(connection) {
      const { provider, credentials } = connection;
      const opener = isProvider(provider, openers) ? openers[provider] : undefined;
      if (!opener || !isProvider(provider, openers)) throw new DriverError(`platform-mode storage on ${connection.provider} connections is not available in this version`, { retryable: false });
      const known = open.get(connection.id);
      if (known && known.sealed === connection.credentials) return known.store;
      // New credentials: a new pool. The old one ends once its queries in flight have (up to 5 s).
      if (known) release(known);
      const entry: Entry = { sealed: connection.credentials, store: opener(services, { provider, credentials }) };
      open.set(connection.id, entry);
      entry.store.catch(() => open.get(connection.id) === entry && open.delete(connection.id));
      return entry.store;
    },
    async close() {
      const entries = [...open.values()];
      open.clear();
      await Promise.all(entries.map((e) => e.store.then((s) => s.close()).catch(() => undefined)));
    },
  };
}
