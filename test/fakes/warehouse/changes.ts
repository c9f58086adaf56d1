// Change tracking, emulated. Snowflake keeps row versions; the fake keeps a full snapshot of a
// tracked table after every committed change (tests use small tables) and answers
// `t CHANGES(INFORMATION => DEFAULT) AT(TIMESTAMP => …) END(TIMESTAMP => …)` as the net
// difference between the snapshots current at AT and at END (multiset EXCEPT ALL both ways).
// What this does not emulate: METADATA$ISUPDATE is always FALSE and METADATA$ROW_ID is NULL (no
// row identity), APPEND_ONLY mode, AT(OFFSET|STATEMENT|STREAM), streams, schema changes between
// versions. Timestamps must be written TO_TIMESTAMP_LTZ(<integer>, <scale>).
import type { DuckDBConnection } from "@duckdb/node-api";
import { objectMissing, WarehouseSqlError } from "./errors.ts";

export interface ChangesClause {
  /** The whole matched text, replaced by a derived table. */
  text: string;
  table: string;
  atMicros: bigint;
  endMicros: bigint | null;
}

const TS = String.raw`TIMESTAMP\s*=>\s*TO_TIMESTAMP_LTZ\s*\(\s*(\d+)\s*,\s*(\d)\s*\)`;
const CLAUSE = new RegExp(
  String.raw`((?:"[^"]*"|[A-Z_][A-Z0-9_$]*)(?:\s*\.\s*(?:"[^"]*"|[A-Z_][A-Z0-9_$]*))*)\s+CHANGES\s*\(\s*INFORMATION\s*=>\s*DEFAULT\s*\)\s*AT\s*\(\s*${TS}\s*\)(?:\s*END\s*\(\s*${TS}\s*\))?`,
);

const toMicros = (value: string, scale: string) => (BigInt(value) * 1_000_000n) / 10n ** BigInt(scale);

export function parseChangesClause(sql: string): ChangesClause | null {
  const m = CLAUSE.exec(sql);
  if (!m) return null;
  const table = m[1]!.split(".").at(-1)!.trim().replace(/^"|"$/g, "");
  return { text: m[0], table, atMicros: toMicros(m[2]!, m[3]!), endMicros: m[4] ? toMicros(m[4], m[5]!) : null };
}

interface Tracked {
  since: bigint;
  /** Versions oldest first; each names a snapshot table in memory.main. */
  versions: { at: bigint; snapshot: string }[];
  /** Time travel before this instant is gone (DATA_RETENTION_TIME_IN_DAYS = 0). */
  retainedFrom: bigint;
}

const timeTravelGone = (table: string) =>
  new WarehouseSqlError(
    "000707",
    `Time travel data is not available for table ${table}. The requested time is either beyond the allowed time travel period or before the object creation time.`,
    "02000",
  );

export class ChangeTracker {
  private readonly tables = new Map<string, Tracked>();
  private counter = 0;

  constructor(
    private readonly db: DuckDBConnection,
    private readonly now: () => bigint,
  ) {}

  isTracked(table: string): boolean {
    return this.tables.has(table);
  }

  async setTracking(table: string, on: boolean) {
    if (!on) return this.forget(table);
    if (this.tables.has(table)) return;
    const since = this.now();
    this.tables.set(table, { since, versions: [], retainedFrom: since });
    await this.recordVersion(table, since);
  }

  async recordVersion(table: string, at: bigint) {
    const tracked = this.tables.get(table);
    if (!tracked) return;
    const snapshot = `memory.main."CT_${table.replace(/\W/g, "_")}_${++this.counter}"`;
    await this.db.run(`CREATE TABLE ${snapshot} AS SELECT * FROM "${table.replaceAll('"', '""')}"`);
    tracked.versions.push({ at, snapshot });
  }

  purgeHistory(table: string) {
    const tracked = this.tables.get(table);
    if (tracked) tracked.retainedFrom = this.now();
  }

  async forget(table: string) {
    const tracked = this.tables.get(table);
    this.tables.delete(table);
    for (const v of tracked?.versions ?? []) await this.db.run(`DROP TABLE IF EXISTS ${v.snapshot}`);
  }

  private snapshotAt(table: string, tracked: Tracked, at: bigint): string {
    if (at < tracked.retainedFrom && at >= tracked.since) throw timeTravelGone(table);
    if (at < tracked.since) {
      throw new WarehouseSqlError("000707", `Change tracking is not enabled or has been missing for the time range requested on table '${table}'.`, "02000");
    }
    let found = tracked.versions[0]!;
    for (const v of tracked.versions) if (v.at <= at) found = v;
    return found.snapshot;
  }

  /** Replaces the CHANGES clause by the net difference between two snapshots. */
  async rewrite(sql: string, clause: ChangesClause): Promise<string> {
    const tracked = this.tables.get(clause.table);
    if (!tracked) {
      const exists = await this.db.runAndReadAll(`SELECT 1 FROM SF_INFO_TABLES WHERE TABLE_NAME = '${clause.table.replaceAll("'", "''")}'`);
      if (exists.getRows().length === 0) throw objectMissing(clause.table);
      throw new WarehouseSqlError("000707", `Change tracking is not enabled or has been missing for the time range requested on table '${clause.table}'.`, "02000");
    }
    const end = clause.endMicros ?? this.now();
    if (end > this.now()) throw timeTravelGone(clause.table);
    const before = this.snapshotAt(clause.table, tracked, clause.atMicros);
    const after = this.snapshotAt(clause.table, tracked, end);
    const meta = (action: string) => `'${action}' AS "METADATA$ACTION", FALSE AS "METADATA$ISUPDATE", CAST(NULL AS VARCHAR) AS "METADATA$ROW_ID"`;
    const diff = `(SELECT *, ${meta("INSERT")} FROM (SELECT * FROM ${after} EXCEPT ALL SELECT * FROM ${before})
      UNION ALL SELECT *, ${meta("DELETE")} FROM (SELECT * FROM ${before} EXCEPT ALL SELECT * FROM ${after}))`;
    return sql.replace(clause.text, `${diff} AS "${clause.table}"`);
  }
}
