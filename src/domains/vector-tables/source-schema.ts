// Reads a source table's schema live, during a request (create, update, GET …/schema). What goes
// wrong is the caller's to fix: an unknown table is 400 naming the field, a source that does not
// answer is 502 `source_error` with the source's own words (docs/api.md#errors, docs/vector-tables.md#vector-tables).
import type { Services } from "../../services.ts";
import { openSource } from "../connections/sources.ts";
import { SourceObjectNotFoundError, type SourceColumn, type SourceConnector } from "../../drivers/sources/types.ts";
import { AppError, DriverError, validationError } from "../../shared/errors.ts";
import { openCredentials, secretsOf } from "../connections/credentials.ts";
import type { ConnectionRow } from "../connections/repo.ts";

/** A schema read waits this long for the database to accept (a request should not hang). */
const CONNECT_TIMEOUT_SEC = 10;

/** Columns of `table` in table order with the source's type names. */
export async function readSourceSchema(services: Services, connection: ConnectionRow, table: string): Promise<SourceColumn[]> {
  let source: SourceConnector | undefined;
  try {
    source = await openSource(services, connection, { connectTimeoutSec: CONNECT_TIMEOUT_SEC, maxConnections: 1 });
    return await source.describeTable(table);
  } catch (err) {
    if (err instanceof SourceObjectNotFoundError) {
      throw validationError([{ path: "source_table", message: `the source has no table "${table}" (${err.message})` }]);
    }
    if (err instanceof DriverError) {
      // Drivers should never echo a password, but a database's own error text might: scrub it.
      const secrets = secretsOf(openCredentials(services.secrets, connection.credentials)).filter((s) => s.length >= 3);
      const words = secrets.reduce((text, secret) => text.replaceAll(secret, "***"), err.message);
      throw new AppError("source_error", `The source database could not be read: ${words}`, { details: { connection_id: connection.id, retryable: err.retryable } });
    }
    throw err;
  } finally {
    await source?.close().catch(() => undefined);
  }
}
