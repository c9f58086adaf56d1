import type { Client, InArgs, InStatement, ResultSet, Transaction, TransactionMode } from "@libsql/client";
import { overlay } from "./overlay.ts";

// Why this exists: for a local file, @libsql/client runs statements synchronously on the JS
// thread, each pooled connection with SQLite's busy timeout. If two connections of this same
// process both wanted the write lock, the second would block the whole event loop inside SQLite
// while the holder — which needs the event loop to commit — could never finish: a self-deadlock
// until the timeout fires. So writers in this process queue on an async gate, and SQLite's busy
// timeout only ever waits for other processes sharing the file, which release on their own.
// (Also, libsql leaves a statement that failed with SQLITE_BUSY unreset on its connection, which
// then cannot commit: one more reason never to let SQLite report BUSY within the process.)

export const BUSY_TIMEOUT_MS = 5_000; // docs/running.md#data-directory: ≥ 5 s

const READ_ONLY = /^\s*(select|pragma\s+\w+\s*$|explain)\b/i;

/** A FIFO async mutex whose waiters give up after twice the busy timeout rather than hang. */
class Gate {
  #tail: Promise<void> = Promise.resolve();

  async acquire(): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const before = this.#tail;
    this.#tail = before.then(() => mine);
    let timer: Timer | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`database is busy: no write slot within ${2 * BUSY_TIMEOUT_MS} ms`)), BUSY_TIMEOUT_MS);
    });
    try {
      await Promise.race([before, timedOut]);
    } catch (err) {
      // Keep the queue order: pass our turn on as soon as it comes.
      before.then(release);
      throw err;
    } finally {
      clearTimeout(timer);
    }
    let released = false;
    return () => {
      if (!released) (released = true), release();
    };
  }
}

const sqlOf = (stmt: InStatement): string => (typeof stmt === "string" ? stmt : stmt.sql);

/** Wraps a local-file client so that writes never block the event loop (see above). */
export function gateWrites(raw: Client): Client {
  const gate = new Gate();

  async function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const release = await gate.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }

  function wrapTransaction(tx: Transaction, release: () => void): Transaction {
    const done = <T>(p: Promise<T>) => p.finally(release);
    return overlay(tx, {
      commit: () => done(tx.commit()),
      rollback: () => done(tx.rollback()),
      close: () => {
        try {
          tx.close();
        } finally {
          release();
        }
      },
    });
  }

  const gated: Partial<Client> = {
    execute: ((stmtOrSql: InStatement, args?: InArgs): Promise<ResultSet> => {
      const run = () => (args === undefined ? raw.execute(stmtOrSql) : raw.execute(sqlOf(stmtOrSql), args));
      return READ_ONLY.test(sqlOf(stmtOrSql)) ? run() : exclusive(run);
    }) as Client["execute"],
    batch: (stmts, mode?: TransactionMode) => (mode === "read" ? raw.batch(stmts, mode) : exclusive(() => raw.batch(stmts, mode))),
    migrate: (stmts) => exclusive(() => raw.migrate(stmts)),
    executeMultiple: (sql) => exclusive(() => raw.executeMultiple(sql)),
    transaction: async (mode: TransactionMode = "write") => {
      if (mode === "read") return raw.transaction(mode);
      const release = await gate.acquire();
      try {
        return wrapTransaction(await raw.transaction(mode), release);
      } catch (err) {
        release();
        throw err;
      }
    },
  };
  return overlay(raw, gated);
}
