// The demo's HTTP calls, each printed first as the curl command that does the same, with the real
// base URL and ids and shell variables ($TOKEN, $VECSYNC_API_KEY, …) in place of secrets.
import type { Output } from "./output.ts";

export type Auth = "none" | "token" | "key";

/**
 * A value shown in the printed command as a shell variable, e.g. `shellVar("CODE")` in a body is
 * printed as `"'"$CODE"'"`, which the shell splices into the single-quoted JSON.
 */
export const shellVar = (name: string) => `@@${name}@@`;

const AUTH_VARS: Record<Exclude<Auth, "none">, string> = { token: "TOKEN", key: "VECSYNC_API_KEY" };

export class DemoCallError extends Error {
  constructor(readonly status: number, what: string, body: string) {
    super(`${what} answered ${status}: ${body}`);
  }
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** JSON with one member per line wherever the value does not fit on one line of `width`. */
export function layoutJson(value: unknown, indent = "", width = 76): string {
  const compact = JSON.stringify(value);
  if (value === null || typeof value !== "object" || indent.length + compact.length <= width) return compact;
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[\n${value.map((v) => inner + layoutJson(v, inner, width)).join(",\n")}\n${indent}]`;
  const members = Object.entries(value).map(([k, v]) => `${inner}${JSON.stringify(k)}: ${layoutJson(v, inner, width)}`);
  return `{\n${members.join(",\n")}\n${indent}}`;
}

/** The curl command for a call; a long body is laid out over several lines. */
export function curlCommand(baseUrl: string, method: string, path: string, auth: Auth, body?: unknown): string {
  const parts = [`curl -s${method === "GET" ? "" : ` -X ${method}`} ${baseUrl}${path}`];
  if (auth !== "none") parts.push(`-H "authorization: Bearer $${AUTH_VARS[auth]}"`);
  if (body !== undefined) {
    const json = layoutJson(body, "    ");
    parts.push("-H 'content-type: application/json'");
    parts.push(`-d ${quote(json).replace(/"@@([A-Z_]+)@@"/g, `"'"$$$1"'"`)}`);
  }
  return "$ " + parts.join(" \\\n    ");
}

export class DemoApi {
  token = "";
  apiKey = "";

  constructor(readonly baseUrl: string, private readonly out: Output) {}

  /** Prints the call's curl command (the `shown` body when given: placeholders), then makes it. */
  async call<T>(method: string, path: string, opts: { auth: Auth; body?: unknown; shown?: unknown; quiet?: boolean }): Promise<T> {
    if (!opts.quiet) this.out.curl(curlCommand(this.baseUrl, method, path, opts.auth, opts.shown ?? opts.body));
    return this.send<T>(method, path, opts.auth, opts.body);
  }

  private async send<T>(method: string, path: string, auth: Auth, body: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (auth === "token") headers.authorization = `Bearer ${this.token}`;
    if (auth === "key") headers.authorization = `Bearer ${this.apiKey}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new DemoCallError(res.status, `${method} ${path}`, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}
