// Every Prometheus metric the service exposes, with its name, labels and help, in one place
// (docs/operability.md#metrics). Each running service owns one registry: prom-client's global
// default registry would mix the services a test process starts and refuse the second
// registration of a name. Labels hold ids and closed sets of words only — never a table's,
// organization's or person's name, a text or a secret — so an exposition can be shared freely
// and its cardinality stays bounded by the number of tables.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** One vector table as the gauges show it; `rows_pending` and `staleness_seconds` as GET …/sync/status reads them. */
export type TableReading = {
  org_id: string;
  vector_table_id: string;
  sync_mode: string;
  rows: number;
  rows_pending: number;
  staleness_seconds: number;
  /** cdc on Postgres: WAL bytes past the applied position; null where not known (no series then). */
  source_lag_bytes: number | null;
};

export type TaskCount = { task_type: string; status: string; count: number };

/** What the scrape-time gauges read: the composition root (src/wiring.ts) hands in the readers. */
export type MetricSources = {
  vectorTables(): Promise<TableReading[]>;
  tasks(): Promise<TaskCount[]>;
};

export type SyncPassKind = "backfill" | "rebackfill" | "batch" | "reconcile" | "cdc";
export type Outcome = "ok" | "error";

/** What an embedding driver reports (drivers/embeddings/types.ts EmbeddingObserver has the same shape). */
export type EmbeddingEvents = {
  /** One upstream request, retries counted one by one; `status` its HTTP status (null: no answer). */
  request(e: { provider: string; model: string; ok: boolean; status: number | null }): void;
  /** Tokens billed for a successful request: the provider's own count when it gives one. */
  tokens(e: { provider: string; model: string; tokens: number }): void;
};

export interface Metrics {
  readonly registry: Registry;
  readonly embeddings: EmbeddingEvents;
  /** A sync pass (or a backfill run) ended; `kind` as in the sync history (CONTRACT 10). */
  syncPass(vectorTableId: string, kind: SyncPassKind, outcome: Outcome): void;
  /** A query answered, after `seconds` (embedding and search), by the search `path` it took. */
  query(path: string, seconds: number): void;
  /** An HTTP exchange: `route` is the template (`/v1/vector-tables/:vector_table_id`), never the raw path. */
  http(method: string, route: string, status: number, seconds: number): void;
  /** The exposition in Prometheus text format, with its content type. */
  scrape(): Promise<{ body: string; contentType: string }>;
}

/** Methods outside this set are one label value, so a client cannot grow the series with made-up verbs. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The route label of a request no route matched (a 404): one series, whatever path was asked for. */
export const UNMATCHED_ROUTE = "unmatched";

/**
 * Latency buckets in seconds. Queries: from an exact scan of a small collection (a millisecond)
 * to a slow provider's query embedding (up to the 15 s deadline, query/service.ts). HTTP adds the
 * long end for requests that wait on a source database.
 */
const QUERY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15];
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Reads shared by the gauges of one scrape: the registry collects every metric at once, so the
 * three table gauges wait on one query instead of running three.
 */
function shared<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | null = null;
  return () => (inFlight ??= read().finally(() => (inFlight = null)));
}

export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry });

  const tables = shared(sources.vectorTables);
  const tableLabels = ["org_id", "vector_table_id", "sync_mode"] as const;
  const tableGauge = (name: string, help: string, value: (t: TableReading) => number | null) =>
    new Gauge({
      name,
      help,
      labelNames: tableLabels,
      registers,
      async collect() {
        const readings = await tables();
        this.reset(); // a deleted table's series goes with it
        for (const t of readings) {
          const v = value(t);
          if (v !== null) this.set({ org_id: t.org_id, vector_table_id: t.vector_table_id, sync_mode: t.sync_mode }, v);
        }
      },
    });
  tableGauge("vecsync_vector_table_rows", "Rows of the source table synced into the vector table (synced_rows).", (t) => t.rows);
  tableGauge("vecsync_vector_table_rows_pending", "Changes known and not yet applied (rows_pending of GET …/sync/status).", (t) => t.rows_pending);
  tableGauge(
    "vecsync_vector_table_source_lag_bytes",
    "cdc tables on Postgres: bytes of WAL the source has written past the position applied (the replication slot's backlog, other tables' WAL included); rows_pending counts only what is decoded.",
    (t) => t.source_lag_bytes,
  );
  tableGauge("vecsync_vector_table_staleness_seconds", "staleness_secs of GET …/sync/status: cdc, age of the oldest unapplied change; batch, seconds since the start of the last completed pass.", (t) => t.staleness_seconds);

  new Gauge({
    name: "vecsync_tasks",
    help: "Tasks in the task table by type and status (finished ones until they are pruned).",
    labelNames: ["task_type", "status"] as const,
    registers,
    async collect() {
      const counts = await sources.tasks();
      this.reset();
      for (const c of counts) this.set({ task_type: c.task_type, status: c.status }, c.count);
    },
  });

  const passes = new Counter({ name: "vecsync_sync_passes_total", help: "Sync passes and backfill runs that ended, by kind and outcome.", labelNames: ["vector_table_id", "kind", "outcome"] as const, registers });
  const requests = new Counter({ name: "vecsync_embedding_requests_total", help: "Requests sent to embedding providers (each retry counted), by outcome.", labelNames: ["provider", "model", "outcome"] as const, registers });
  const tokens = new Counter({ name: "vecsync_embedding_tokens_total", help: "Tokens billed by embedding providers (their own count when they answer one, else our estimate).", labelNames: ["provider", "model"] as const, registers });
  const rateLimited = new Counter({ name: "vecsync_embedding_rate_limited_total", help: "Embedding requests answered 429 (rate limited) by the provider.", labelNames: ["provider", "model"] as const, registers });
  const queries = new Histogram({ name: "vecsync_query_duration_seconds", help: "Query latency (embedding the text and searching), by the search path taken.", labelNames: ["path"] as const, buckets: QUERY_BUCKETS, registers });
  const httpDuration = new Histogram({ name: "vecsync_http_request_duration_seconds", help: "HTTP request latency by method, route template and status.", labelNames: ["method", "route", "status"] as const, buckets: HTTP_BUCKETS, registers });

  return {
    registry,
    embeddings: {
      request({ provider, model, ok, status }) {
        requests.inc({ provider, model, outcome: ok ? "ok" : "error" });
        if (status === 429) rateLimited.inc({ provider, model });
      },
      tokens({ provider, model, tokens: n }) {
        if (n > 0) tokens.inc({ provider, model }, n);
      },
    },
    syncPass: (vectorTableId, kind, outcome) => passes.inc({ vector_table_id: vectorTableId, kind, outcome }),
    query: (path, seconds) => queries.observe({ path }, seconds),
    http: (method, route, status, seconds) => httpDuration.observe({ method: METHODS.has(method) ? method : "OTHER", route, status: String(status) }, seconds),
    scrape: async () => ({ body: await registry.metrics(), contentType: registry.contentType }),
  };
}
