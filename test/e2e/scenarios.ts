// Steps the Postgres end-to-end tests run alike in managed and in platform mode.
import { bruteForce, eventuallyExact, eventuallyStatus, mismatch, type Config, type Probe, type Row } from "./helpers.ts";
import type { PgWorld } from "./postgres-world.ts";
import { codesProbe, NEW_CONFIG, OLD_CONFIG, PROBES } from "./source.ts";

export type RebackfillQueries = { answered: number; fromOld: number; fromNew: number; failures: string[] };

/**
 * Queries `probes` over and over until the table is `synced` again after a PUT, each answer
 * checked to be exactly the old configuration's or the new one's over `rows` (the source holding
 * still meanwhile). `between` runs before each round (e.g. to watch the storage).
 */
export async function queriesDuringRebackfill(w: PgWorld, tableId: string, rows: Row[], probes: Probe[], between: () => Promise<void> = async () => {}): Promise<RebackfillQueries> {
  const seen: RebackfillQueries = { answered: 0, fromOld: 0, fromNew: 0, failures: [] };
  let done = false;
  const loop = (async () => {
    while (!done) {
      await between();
      for (const p of probes) {
        const answer = await w.api.call("POST", `/v1/vector-tables/${tableId}/query`, p.body);
        seen.answered++;
        const old = mismatch(answer, bruteForce(OLD_CONFIG, rows, p.body, p.where));
        const neu = mismatch(answer, bruteForce(NEW_CONFIG, rows, p.body, p.where));
        if (old === null) seen.fromOld++;
        else if (neu === null) seen.fromNew++;
        else seen.failures.push(`${JSON.stringify(p.body)}: old: ${old}; new: ${neu}`);
      }
    }
  })();
  try {
    await eventuallyStatus(w.api, tableId, "synced", 30_000);
  } finally {
    done = true;
    await loop;
  }
  return seen;
}

/**
 * The cdc edits, each applied then awaited through `reflected` (which answers how long it took):
 * an insert, a text update, a metadata-only update, a delete, an emptied text, and several
 * changes in one transaction. Answers the times and the probe that sees the rows touched.
 */
export async function streamedEdits(w: PgWorld, reflected: (change: () => Promise<unknown>, probes: Probe[]) => Promise<number>): Promise<{ took: number[]; touched: Probe }> {
  const touched = codesProbe(["r2000", "r21", "r22", "r23", "r24", "r25"], "zebra quasar walrus nebula");
  const took = [
    await reflected(() => w.pg.sql`INSERT INTO docs VALUES (2000, 'zebra quasar lantern', 'a brand new row', 'travel', 12.5, 7, true, 'r2000')`, [touched]),
    await reflected(() => w.pg.sql`UPDATE docs SET title = 'walrus nebula', body = 'rewritten text' WHERE id = 21`, [touched]),
    await reflected(() => w.pg.sql`UPDATE docs SET category = 'changed', price = 99.5, stock = 19, active = false WHERE id = 22`, [touched]),
    await reflected(() => w.pg.sql`DELETE FROM docs WHERE id = 23`, [touched]),
    await reflected(() => w.pg.sql`UPDATE docs SET title = NULL, body = NULL WHERE id = 24`, [touched]),
    // Several changes in one transaction land together.
    await reflected(() => w.pg.sql.begin((tx) => [tx`UPDATE docs SET category = NULL WHERE id BETWEEN 30 AND 60`, tx`DELETE FROM docs WHERE id BETWEEN 61 AND 70`]), PROBES),
  ];
  return { took, touched };
}

/** The batch edits: an insert, a text update, a metadata-only update, a delete, an emptied text; answers the probe that sees them. */
export async function sourceEdits(w: PgWorld): Promise<Probe> {
  await w.pg.sql`INSERT INTO docs VALUES (1000, 'zebra quasar lantern', 'a brand new row', 'travel', 12.5, 7, true, 'r1000')`;
  await w.pg.sql`UPDATE docs SET title = 'walrus nebula', body = 'rewritten text' WHERE id = 5`;
  await w.pg.sql`UPDATE docs SET category = 'changed', price = 99.5, stock = 19, active = false WHERE id = 6`;
  await w.pg.sql`DELETE FROM docs WHERE id = 7`;
  await w.pg.sql`UPDATE docs SET title = NULL, body = NULL WHERE id = 8`;
  return codesProbe(["r1000", "r5", "r6", "r7", "r8", "r9"], "zebra quasar walrus nebula");
}

/** `reflected(change, probes, config)`: applies `change`, then waits for the probes to be exact on the table; answers how long it took. */
export function reflectedOn(w: PgWorld, tableId: () => string, boundMs: number) {
  return async (change: () => Promise<unknown>, probes: Probe[] = PROBES, config: Config = OLD_CONFIG): Promise<number> => {
    await change();
    const started = Date.now();
    await eventuallyExact(w.api, tableId(), probes, config, w.readRows, boundMs);
    return Date.now() - started;
  };
}
