// A start must not quietly make stored credentials unreadable. Without VECSYNC_MASTER_KEY the
// master key lives in `<data-dir>/master.key` and is generated when that file is absent — right
// for a new data directory, wrong for a restored database whose key was not copied beside it (or a
// data dir whose key file was lost): the new key cannot open one stored provider key or connection
// credential, and nothing would say so until the first sync failed. So when the key is about to be
// generated over a database that already holds sealed secrets, the start is refused instead
// (docs/running.md#secrets). Read-only; no migration needed: the tables have been there from the start.
import { createClient } from "@libsql/client";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { StartRefused } from "./data-dir.ts";
import { localDatabasePath } from "./db/client.ts";

export const MASTER_KEY_FILE = "master.key";

/** Sealed secrets in the database: connection credentials and hosted providers' api keys. 0 before the first migration. */
export async function sealedSecretCount(databaseUrl: string): Promise<number> {
  const file = localDatabasePath(databaseUrl);
  if (file !== null && !existsSync(file)) return 0; // opening would create it
  const client = createClient({ url: databaseUrl, intMode: "number" });
  try {
    const { rows } = await client.execute(
      "SELECT (SELECT count(*) FROM connections) + (SELECT count(*) FROM embedding_providers WHERE api_key_sealed IS NOT NULL) AS n",
    );
    return Number(rows[0]?.n ?? 0);
  } catch (err) {
    if (/no such table/i.test(String((err as Error).message))) return 0; // not migrated yet: nothing sealed
    throw err;
  } finally {
    client.close();
  }
}

/** Throws StartRefused (exit 2) when a new master key would be generated over sealed secrets. */
export async function refuseNewMasterKey(opts: { dataDir: string; databaseUrl: string; masterKeyGiven: boolean }): Promise<void> {
  const keyFile = join(opts.dataDir, MASTER_KEY_FILE);
  if (opts.masterKeyGiven || existsSync(keyFile)) return;
  const sealed = await sealedSecretCount(opts.databaseUrl);
  if (sealed === 0) return;
  throw new StartRefused(
    `${keyFile} is missing but the database holds ${sealed} credential(s) encrypted with a master key: ` +
      `copy the master.key kept with this database into ${opts.dataDir} (or set VECSYNC_MASTER_KEY); ` +
      `to start with a new key anyway and enter those credentials again, create one first (head -c 32 /dev/urandom | base64 > ${keyFile})`,
  );
}
