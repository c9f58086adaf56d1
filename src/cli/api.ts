// The REST calls of the client commands, over fetch: the same /v1 routes any client uses
// (docs/api.md). Every failure becomes one line: the API's own error code and message, or why the
// service could not be reached.
import { failure } from "./errors.ts";
import type { ClientOptions } from "./options.ts";

/** A service that neither answers nor refuses within this is reported, not waited on forever. */
const REQUEST_TIMEOUT_MS = 15_000;

type ErrorBody = { error?: { code?: unknown; message?: unknown } };

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** Bun and Node name a refused or unresolved connection differently; the operator needs the gist. */
function unreachableReason(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: { code?: unknown } };
  if (e.name === "TimeoutError") return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  const code = String(e.code ?? e.cause?.code ?? "");
  if (/ConnectionRefused|ECONNREFUSED/.test(code)) return "connection refused";
  if (/ENOTFOUND|EAI_AGAIN|DNS/i.test(code)) return "host not found";
  return oneLine(String(e.message ?? err));
}

export class ServiceClient {
  constructor(readonly options: ClientOptions) {}

  /** GET `path` (with its query) and parse the JSON answer; throws CliError (exit 1) on any failure. */
  async get<T>(path: string): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}`, accept: "application/json" };
    if (this.options.environmentId) headers["x-environment-id"] = this.options.environmentId;
    let res: Response;
    try {
      res = await fetch(`${this.options.url}${path}`, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (err) {
      throw failure(`cannot reach the service at ${this.options.url}: ${unreachableReason(err)}`);
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      throw failure(`${this.options.url}${path} answered HTTP ${res.status} with a body that is not JSON: is --url a vecsync service?`);
    }
    if (!res.ok) {
      const error = (body as ErrorBody | null)?.error;
      if (typeof error?.code === "string") throw failure(`${error.code}: ${oneLine(String(error.message ?? ""))} (HTTP ${res.status} from GET ${path.split("?")[0]})`);
      throw failure(`GET ${path.split("?")[0]} answered HTTP ${res.status}: is --url a vecsync service?`);
    }
    return body as T;
  }

  /** Every item of a paginated list (CONTRACT 2 envelope), following next_cursor. */
  async all<T>(path: string): Promise<T[]> {
    const items: T[] = [];
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams({ limit: "100" });
      if (cursor) query.set("cursor", cursor);
      const page: { data: T[]; pagination?: { has_more?: boolean; next_cursor?: string | null } } = await this.get(`${path}?${query}`);
      items.push(...page.data);
      cursor = page.pagination?.has_more ? (page.pagination.next_cursor ?? null) : null;
    } while (cursor);
    return items;
  }
}

/** Runs `fn` over `items`, at most `limit` at a time, keeping their order. */
export async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
