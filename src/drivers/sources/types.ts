// The SourceConnector interface every source driver implements (Postgres, the warehouse). Plain
// data only: callers (services, tasks, tests, bench) depend on this file, never on a driver's
// client library. One contract suite (test/drivers/sources/contract.ts) runs against each driver.
import { DriverError } from "../../shared/errors.ts";

/**
 * A column value as read from the source, stable for rendering text: integers and floats as
 * numbers (a bigint past ±2^53 and every `numeric` as a string, so no digit is lost), booleans,
 * dates and timestamps as ISO 8601 strings (timestamptz in UTC with `Z`), json and arrays as the
 * source's own text, anything else as text. SQL NULL is null.
 */
export type SourceValue = string | number | boolean | null;

/** A primary-key value; primary keys are never null. */
export type KeyValue = string | number | boolean;

/** One value per primary-key column, in the order of the `pk` column list. */
export type Key = KeyValue[];

/** Schema entry (docs/vector-tables.md#vector-tables): the source's own type name, the primary key `nullable: false`. */
export interface SourceColumn {
  name: string;
  type: string;
  nullable: boolean;
}

export interface ScanRequest {
  table: string;
  /** Primary-key columns; several for a composite key (compared as a row). */
  pk: string[];
  /** Columns to read besides the key. */
  columns: string[];
  /** Start after this key (exclusive); null for the first page. */
  afterPk: Key | null;
  limit: number;
}

export interface SourceRow {
  key: Key;
  /** Every requested column by name, key columns included. */
  values: Record<string, SourceValue>;
  /** Set when `FetchRequest.textLimit` held the row's text back: the UTF-8 bytes its text columns hold. */
  textBytes?: number;
}

export interface HashRequest {
  table: string;
  pk: string[];
  textColumns: string[];
  metaColumns: string[];
  afterPk: Key | null;
  limit: number;
}

/** Hashes computed in the source's SQL; 32 lowercase hex digits (16 bytes) each. */
export interface RowHash {
  key: Key;
  textHash: string;
  metaHash: string;
}

/** `HashRequest` by key instead of by page. */
export interface KeyHashRequest {
  table: string;
  pk: string[];
  textColumns: string[];
  metaColumns: string[];
  keys: Key[];
}

export interface FetchRequest {
  table: string;
  pk: string[];
  columns: string[];
  keys: Key[];
  /**
   * Text columns not to read past `maxBytes` together: a row whose `columns` hold more text comes
   * back with them null and `textBytes` set, measured by the source, the text left on its side.
   * Key columns are read whole. A driver may ignore it (the caller checks what it renders).
   */
  textLimit?: TextLimit;
}

export type TextLimit = { columns: string[]; maxBytes: number };

/** A change feed for one synced table. `stream` names it (e.g. the vector table id). */
export interface CdcTarget {
  stream: string;
  table: string;
  pk: string[];
}

/**
 * The keys one source transaction touched; re-read them with `fetchByKeys` (absent = deleted). A
 * batch without keys (and not `allRowsChanged`) only moves the position past changes that were
 * not the table's: store its checkpoint and acknowledge it like any other.
 */
export interface ChangeBatch {
  /** Opaque, resumable position: acknowledge it once the batch is committed downstream. */
  checkpoint: string;
  keys: Key[];
  /** TRUNCATE, or too many keys to list: treat every row as changed (a full hash resync). */
  allRowsChanged: boolean;
  /** When the source committed the transaction. */
  committedAt: Date;
}

/** A batch that only moves the position (no keys, not every row): store it and acknowledge it. */
export const positionOnly = (batch: ChangeBatch): boolean => batch.keys.length === 0 && !batch.allRowsChanged;

/** What a stream holds that the consumer has not applied (docs/vector-tables.md#sync-status). */
export type StreamBacklog = {
  /** Keys read past `applied` and not applied: batches handed out ahead of it, queued, or still being decoded. */
  keys: number;
  /** How far the source's log runs past a position, in bytes; null where the source cannot tell. */
  bytes: number | null;
};

export interface ChangeStream extends AsyncIterable<ChangeBatch> {
  /** What waits behind the batch being applied, whose checkpoint is `applied`. */
  backlog(applied: string): StreamBacklog;
  /** Confirms everything up to and including `checkpoint`; the source may then forget it. */
  ack(checkpoint: string): Promise<void>;
  close(): Promise<void>;
}

export interface SourceConnector {
  /** Tag stored beside each hash: a different tag means the formula changed, so rehash. */
  readonly hashAlgorithm: string;
  test(): Promise<{ latencyMs: number }>;
  /** Columns in table order; an unknown table throws SourceObjectNotFoundError. */
  describeTable(table: string): Promise<SourceColumn[]>;
  count(table: string): Promise<number>;
  /** One page in primary-key order. */
  scan(request: ScanRequest): Promise<SourceRow[]>;
  /** One page of `(key, text_hash, meta_hash)` in primary-key order; only hashes cross the wire. */
  hashes(request: HashRequest): Promise<RowHash[]>;
  /**
   * `hashes` of the rows that still exist among `keys` (a missing key was deleted), by the same
   * formula: a hash read by key always equals the one a page read gives. Order unspecified.
   */
  hashesByKeys(request: KeyHashRequest): Promise<RowHash[]>;
  /** The rows that still exist among `keys` (a missing key was deleted); order unspecified. */
  fetchByKeys(request: FetchRequest): Promise<SourceRow[]>;
  /**
   * Starts recording changes for the target and answers the checkpoint to stream from. Call it
   * BEFORE the backfill reads anything, so no change between snapshot and stream is lost.
   */
  prepareCdc(target: CdcTarget): Promise<{ checkpoint: string }>;
  /** Streams changes after `checkpoint`; a lost feed throws CdcFeedLostError (resync fully). */
  changes(target: CdcTarget, checkpoint: string): Promise<ChangeStream>;
  /** Stops recording changes for the target and frees what the source kept for it. */
  teardownCdc(target: CdcTarget): Promise<void>;
  close(): Promise<void>;
}

/** A table or column the source does not have; the service answers 400 `validation_error`. */
export class SourceObjectNotFoundError extends DriverError {
  readonly kind: "table" | "column";

  constructor(kind: "table" | "column", message: string, cause?: unknown) {
    super(message, { retryable: false, cause, context: { kind } });
    this.name = "SourceObjectNotFoundError";
    this.kind = kind;
  }
}

/** The change feed is gone (slot dropped or invalidated, retention passed): resync by hashes. */
export class CdcFeedLostError extends DriverError {
  constructor(message: string, cause?: unknown) {
    super(message, { retryable: false, cause, context: { feedLost: true } });
    this.name = "CdcFeedLostError";
  }
}

/** The row id the API shows for a key (docs/vector-tables.md#text-and-metadata): the value as a string; JSON for composites. */
export function keyText(key: Key): string {
  return key.length === 1 ? String(key[0]) : JSON.stringify(key);
}

/** Keys per fetch-by-key query: a short `IN (…)` statement, far under either source's parameter limits. */
export const FETCH_CHUNK = 1000;

/** Refuses a page request no source could answer (both drivers check before building SQL). */
export function checkPage(pk: string[], limit: number): void {
  if (pk.length === 0) throw new DriverError("a primary key needs at least one column", { retryable: false });
  if (!Number.isSafeInteger(limit) || limit < 1) throw new DriverError(`invalid page size ${limit}`, { retryable: false });
}
