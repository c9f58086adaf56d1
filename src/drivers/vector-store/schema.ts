// The store's own SQL: a small registry of collections and generations, and three tables (plus
// the keyword index, keyword-index.ts) per generation. Collections appear at run time, so this is plain SQL, not drizzle migrations.
// Every identifier is quoted; collection names are also restricted to [a-z0-9_] (docs/vector-tables.md#vector-tables).
import { type GenerationSpec, metadataColumnName, type MetadataType, VectorStoreError } from "../store-api/index.ts";

const NAME_PATTERN = /^[a-z0-9_]{1,160}$/;

export function assertCollectionName(name: string): void {
  if (!NAME_PATTERN.test(name)) {
    throw new VectorStoreError("invalid_name", `collection name must match ${NAME_PATTERN}: ${JSON.stringify(name)}`);
  }
}

export function quoteIdent(id: string): string {
  return `"${id.replaceAll('"', '""')}"`;
}

export interface GenerationTables {
  /** pk, hashes, change sequences and typed metadata: narrow, so filter scans stay cheap. */
  rows: string;
  /** Embedded text and the f32 vector blob, kept apart from `rows` for the same reason. */
  docs: string;
  /** Tombstones (rid, seq) so a replay after a checkpoint knows what was deleted. */
  gone: string;
  /** The FTS5 keyword index over `docs.text`, rowid = rid (keyword-index.ts). */
  words: string;
}

export function generationTables(collection: string, generation: number): GenerationTables {
  const base = `vs_${collection}__g${generation}`;
  return { rows: quoteIdent(`${base}__rows`), docs: quoteIdent(`${base}__docs`), gone: quoteIdent(`${base}__gone`), words: quoteIdent(`${base}__words`) };
}

/** Our identifiers are [a-z0-9_] inside double quotes: FTS5 options and sqlite_master take the bare name. */
export const bareIdent = (quoted: string) => quoted.slice(1, -1);

/** The generation's keyword index (keyword-index.ts): FTS5 over `docs.text`, external content, rowid = rid. */
export function keywordIndexDdl(t: GenerationTables): string {
  return `CREATE VIRTUAL TABLE IF NOT EXISTS ${t.words} USING fts5(text, content='${bareIdent(t.docs)}', content_rowid='rid', tokenize='unicode61 remove_diacritics 2')`;
}

export const REGISTRY_DDL = [
  `CREATE TABLE IF NOT EXISTS vs_collections (
    name TEXT PRIMARY KEY,
    live_generation INTEGER NOT NULL,
    next_generation INTEGER NOT NULL DEFAULT 2,
    created_at TEXT NOT NULL
  )`,
  // seq: the last change sequence committed to the generation; each write batch bumps it once.
  `CREATE TABLE IF NOT EXISTS vs_generations (
    collection TEXT NOT NULL,
    generation INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('building', 'live', 'retired')),
    spec TEXT NOT NULL,
    seq INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    PRIMARY KEY (collection, generation)
  )`,
  // The last index checkpoint of each generation, as written beside the file (checkpoint.ts):
  // a start trusts a file only when it matches this record, so damage plus a rewritten
  // description beside it is still caught. A table of its own: no migration of vs_generations.
  `CREATE TABLE IF NOT EXISTS vs_checkpoints (
    collection TEXT NOT NULL,
    generation INTEGER NOT NULL,
    file TEXT NOT NULL,
    seq INTEGER NOT NULL,
    count INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    crc32 INTEGER NOT NULL,
    PRIMARY KEY (collection, generation)
  )`,
];

const SQL_TYPES: Record<MetadataType, string> = { keyword: "TEXT", integer: "INTEGER", float: "REAL", boolean: "INTEGER" };

export function createGenerationDdl(collection: string, generation: number, spec: GenerationSpec): string[] {
  const t = generationTables(collection, generation);
  const base = `vs_${collection}__g${generation}`;
  const metaColumns = spec.metadata.map((c, i) => `, ${metadataColumnName(i)} ${SQL_TYPES[c.type]}`).join("");
  // AUTOINCREMENT: a rid is never reused, so an index key or a tombstone always means one row.
  return [
    `CREATE TABLE ${t.rows} (
      rid INTEGER PRIMARY KEY AUTOINCREMENT,
      pk TEXT NOT NULL UNIQUE,
      text_hash TEXT NOT NULL,
      meta_hash TEXT NOT NULL,
      seq INTEGER NOT NULL,
      vec_seq INTEGER NOT NULL${metaColumns}
    )`,
    `CREATE INDEX ${quoteIdent(`${base}__rows_seq`)} ON ${t.rows} (seq)`,
    ...spec.metadata.map((_, i) => `CREATE INDEX ${quoteIdent(`${base}__rows_m${i}`)} ON ${t.rows} (${metadataColumnName(i)})`),
    `CREATE TABLE ${t.docs} (rid INTEGER PRIMARY KEY, text TEXT NOT NULL, vec BLOB NOT NULL)`,
    `CREATE TABLE ${t.gone} (rid INTEGER PRIMARY KEY, seq INTEGER NOT NULL)`,
    keywordIndexDdl(t),
  ];
}

export function dropGenerationDdl(collection: string, generation: number): string[] {
  const t = generationTables(collection, generation);
  return [`DROP TABLE IF EXISTS ${t.words}`, `DROP TABLE IF EXISTS ${t.rows}`, `DROP TABLE IF EXISTS ${t.docs}`, `DROP TABLE IF EXISTS ${t.gone}`];
}
