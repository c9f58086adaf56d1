// A decoder for the streaming replication protocol and pgoutput (protocol version 1), just the
// messages CDC needs: transaction bounds, relations, row changes and TRUNCATE. Column values
// arrive as text (no `binary` option) and are parsed by postgres-values.ts like query results.
// Reference: "Streaming Replication Protocol" and "Logical Replication Message Formats" in the
// PostgreSQL manual.

/** Microseconds between the Unix epoch and the Postgres epoch (2000-01-01). */
const PG_EPOCH_US = 946_684_800_000_000n;

export function lsnToBigInt(lsn: string): bigint {
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(lsn);
  if (!match) throw new Error(`invalid LSN ${JSON.stringify(lsn)}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

export function lsnToString(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffffffffn).toString(16).toUpperCase()}`;
}

const pgTime = (micros: bigint) => new Date(Number((micros + PG_EPOCH_US) / 1000n));

export interface RelationColumn {
  name: string;
  typeOid: number;
  isKey: boolean;
}

export interface Relation {
  oid: number;
  schema: string;
  table: string;
  columns: RelationColumn[];
}

/** Text per column; null for SQL NULL, undefined for an unchanged TOASTed value (not sent). */
export type Tuple = (string | null | undefined)[];

export type PgOutputMessage =
  | { tag: "begin"; finalLsn: bigint; commitTime: Date; xid: number }
  | { tag: "commit"; commitLsn: bigint; endLsn: bigint; commitTime: Date }
  | { tag: "relation"; relation: Relation }
  | { tag: "insert"; relationOid: number; newTuple: Tuple }
  | { tag: "update"; relationOid: number; oldTuple: Tuple | null; newTuple: Tuple }
  | { tag: "delete"; relationOid: number; oldTuple: Tuple }
  | { tag: "truncate"; relationOids: number[] }
  | { tag: "other"; type: string };

class Reader {
  offset = 0;
  constructor(private readonly buf: Buffer) {}
  u8() {
    return this.buf.readUInt8(this.offset++);
  }
  u16() {
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }
  u32() {
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }
  u64() {
    const v = this.buf.readBigUInt64BE(this.offset);
    this.offset += 8;
    return v;
  }
  cstring() {
    const end = this.buf.indexOf(0, this.offset);
    const s = this.buf.toString("utf8", this.offset, end);
    this.offset = end + 1;
    return s;
  }
  tuple(): Tuple {
    const count = this.u16();
    const values: Tuple = new Array(count);
    for (let i = 0; i < count; i++) {
      const kind = String.fromCharCode(this.u8());
      if (kind === "n") values[i] = null;
      else if (kind === "u") values[i] = undefined;
      else {
        const length = this.u32();
        values[i] = this.buf.toString("utf8", this.offset, this.offset + length);
        this.offset += length;
      }
    }
    return values;
  }
}

export function decodePgOutput(buf: Buffer): PgOutputMessage {
  const r = new Reader(buf);
  const type = String.fromCharCode(r.u8());
  switch (type) {
    case "B":
      return { tag: "begin", finalLsn: r.u64(), commitTime: pgTime(r.u64()), xid: r.u32() };
    case "C": {
      r.u8(); // flags, unused
      return { tag: "commit", commitLsn: r.u64(), endLsn: r.u64(), commitTime: pgTime(r.u64()) };
    }
    case "R": {
      const oid = r.u32();
      const schema = r.cstring();
      const table = r.cstring();
      r.u8(); // replica identity setting
      const columns: RelationColumn[] = [];
      for (let n = r.u16(); n > 0; n--) {
        const isKey = (r.u8() & 1) === 1;
        const name = r.cstring();
        const typeOid = r.u32();
        r.u32(); // type modifier
        columns.push({ name, typeOid, isKey });
      }
      return { tag: "relation", relation: { oid, schema, table, columns } };
    }
    case "I": {
      const relationOid = r.u32();
      r.u8(); // 'N'
      return { tag: "insert", relationOid, newTuple: r.tuple() };
    }
    case "U": {
      const relationOid = r.u32();
      let marker = String.fromCharCode(r.u8());
      let oldTuple: Tuple | null = null;
      if (marker === "K" || marker === "O") {
        oldTuple = r.tuple();
        marker = String.fromCharCode(r.u8());
      }
      return { tag: "update", relationOid, oldTuple, newTuple: r.tuple() };
    }
    case "D": {
      const relationOid = r.u32();
      r.u8(); // 'K' or 'O'
      return { tag: "delete", relationOid, oldTuple: r.tuple() };
    }
    case "T": {
      const count = r.u32();
      r.u8(); // options: CASCADE, RESTART IDENTITY
      const relationOids: number[] = [];
      for (let i = 0; i < count; i++) relationOids.push(r.u32());
      return { tag: "truncate", relationOids };
    }
    default:
      return { tag: "other", type };
  }
}

/** A CopyData payload of a replication stream: WAL data or a server keepalive. */
export type ReplicationFrame =
  | { kind: "xlog"; walStart: bigint; walEnd: bigint; payload: Buffer }
  | { kind: "keepalive"; walEnd: bigint; replyRequested: boolean }
  | { kind: "unknown" };

export function decodeFrame(buf: Buffer): ReplicationFrame {
  if (buf[0] === 0x77 /* w */) {
    return { kind: "xlog", walStart: buf.readBigUInt64BE(1), walEnd: buf.readBigUInt64BE(9), payload: buf.subarray(25) };
  }
  if (buf[0] === 0x6b /* k */) return { kind: "keepalive", walEnd: buf.readBigUInt64BE(1), replyRequested: buf[17] === 1 };
  return { kind: "unknown" };
}

/**
 * Standby status update. `flushed` is what the slot keeps as confirmed_flush_lsn: the server may
 * recycle WAL before it and never sends transactions that ended at or before it again.
 */
export function statusUpdate(received: bigint, flushed: bigint): Buffer {
  const buf = Buffer.alloc(34);
  buf[0] = 0x72; // r
  buf.writeBigUInt64BE(received, 1);
  buf.writeBigUInt64BE(flushed, 9);
  buf.writeBigUInt64BE(flushed, 17);
  buf.writeBigInt64BE(BigInt(Date.now()) * 1000n - PG_EPOCH_US, 25);
  buf[33] = 0;
  return buf;
}
