import type { Config } from "../../config.ts";
import { validateModelChoice, type ProviderName } from "../../drivers/embeddings/index.ts";
import type { ErrorDetail } from "../../shared/errors.ts";

// Content rules for the fields whose values must not be echoed (api_key) or need more than a type
// (base_url, default_model). Messages name the field and the rule, never the value given.

export type CredentialFields = { api_key?: string; base_url?: string | null; default_model?: string | null };

/** Link-local and cloud-metadata endpoints (docs/api.md#embedding-providers): a base URL may never reach them. */
const METADATA_HOSTS = new Set(["169.254.169.254", "fd00:ec2::254", "metadata.google.internal", "metadata"]);

function ipv4ToInt(ip: string): number | null {
  const parts = ip.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

/** `entry` is a host name or an IPv4 CIDR (VECSYNC_DENY_HOSTS / VECSYNC_ALLOW_HOSTS). */
function hostMatches(host: string, entry: string): boolean {
  const e = entry.trim().toLowerCase().replace(/^\[|\]$/g, "");
  if (e === host) return true;
  const [net, bits] = e.split("/");
  const ip = ipv4ToInt(host);
  const base = net === undefined ? null : ipv4ToInt(net);
  if (ip === null || base === null || bits === undefined || !/^\d{1,2}$/.test(bits) || Number(bits) > 32) return false;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return ((ip & mask) >>> 0) === ((base & mask) >>> 0);
}

export function hostRefused(hostname: string, config: Pick<Config, "denyHosts" | "allowHosts">): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (config.allowHosts.some((e) => hostMatches(host, e))) return false;
  if (config.denyHosts.some((e) => hostMatches(host, e))) return true;
  return METADATA_HOSTS.has(host) || hostMatches(host, "169.254.0.0/16");
}

/**
 * The base URL as stored (trailing slashes dropped: drivers append `/embeddings` or
 * `/publishers/…`), or the problem with it.
 */
export function normalizeBaseUrl(raw: string, config: Pick<Config, "denyHosts" | "allowHosts">): { url: string } | { problem: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: "must be an absolute http(s) URL" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { problem: "must be an http or https URL" };
  // A user:password part would be echoed back in every answer; keys go in api_key.
  if (url.username || url.password) return { problem: "must not carry credentials; send the key as api_key" };
  if (url.search || url.hash) return { problem: "must not have a query string or fragment (paths are appended to it)" };
  if (hostRefused(url.hostname, config)) return { problem: "must not point at a link-local or cloud-metadata address" };
  return { url: url.href.replace(/\/+$/, "") };
}

const KEY_FORBIDDEN = /[\s\u0000-\u001f\u007f]/;

/** Problems of the provider-dependent fields; `creating` makes api_key required for hosted ones. */
export function credentialProblems(provider: ProviderName, fields: CredentialFields, config: Pick<Config, "denyHosts" | "allowHosts">, creating: boolean): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const local = provider === "local";
  if (local && fields.api_key !== undefined) problems.push({ path: "api_key", message: "must be omitted: the local provider runs in process and needs no key" });
  if (!local && creating && fields.api_key === undefined) problems.push({ path: "api_key", message: `is required for ${provider}` });
  if (fields.api_key !== undefined && KEY_FORBIDDEN.test(fields.api_key)) problems.push({ path: "api_key", message: "must not contain whitespace or control characters" });
  if (typeof fields.base_url === "string") {
    if (local) problems.push({ path: "base_url", message: "must be omitted: the local provider calls no service" });
    else {
      const checked = normalizeBaseUrl(fields.base_url, config);
      if ("problem" in checked) problems.push({ path: "base_url", message: checked.problem });
    }
  }
  if (typeof fields.default_model === "string") {
    for (const p of validateModelChoice(provider, fields.default_model)) problems.push({ path: "default_model", message: p.message });
  }
  return problems;
}
