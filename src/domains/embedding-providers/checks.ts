import { validateModelChoice, type ProviderName } from "../../drivers/embeddings/index.ts";
import type { ErrorDetail } from "../../shared/errors.ts";
import { hostSpellingProblem, type HostPolicy } from "../../shared/host-guard.ts";

// Content rules for the fields whose values must not be echoed (api_key) or need more than a type
// (base_url, default_model). Messages name the field and the rule, never the value given.

export type CredentialFields = { api_key?: string; base_url?: string | null; default_model?: string | null };

/**
 * The base URL as stored (trailing slashes dropped: drivers append `/embeddings` or
 * `/publishers/…`), or the problem with it.
 */
export function normalizeBaseUrl(raw: string, policy: HostPolicy): { url: string } | { problem: string } {
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
  // The host guard's check without DNS (docs/api.md#host-guard); names are resolved and checked
  // again at every request, since DNS may answer differently then.
  const refused = hostSpellingProblem(url.hostname, policy);
  if (refused) return { problem: `must not point at this host: ${refused}` };
  return { url: url.href.replace(/\/+$/, "") };
}

const KEY_FORBIDDEN = /[\s\u0000-\u001f\u007f]/;

/** Problems of the provider-dependent fields; `creating` makes api_key required for hosted ones. */
export function credentialProblems(provider: ProviderName, fields: CredentialFields, policy: HostPolicy, creating: boolean): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const local = provider === "local";
  if (local && fields.api_key !== undefined) problems.push({ path: "api_key", message: "must be omitted: the local provider runs in process and needs no key" });
  if (!local && creating && fields.api_key === undefined) problems.push({ path: "api_key", message: `is required for ${provider}` });
  if (fields.api_key !== undefined && KEY_FORBIDDEN.test(fields.api_key)) problems.push({ path: "api_key", message: "must not contain whitespace or control characters" });
  if (typeof fields.base_url === "string") {
    if (local) problems.push({ path: "base_url", message: "must be omitted: the local provider calls no service" });
    else {
      const checked = normalizeBaseUrl(fields.base_url, policy);
      if ("problem" in checked) problems.push({ path: "base_url", message: checked.problem });
    }
  }
  if (typeof fields.default_model === "string") {
    for (const p of validateModelChoice(provider, fields.default_model)) problems.push({ path: "default_model", message: p.message });
  }
  return problems;
}
