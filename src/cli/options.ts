// The settings of the commands that talk to a running service (status, tasks). Like the demo's,
// they are not service settings (config.ts holds those): the caller hands in its environment.
import { ArgsError, parseFlags, type Flags } from "../shared/args.ts";
import { usage } from "./errors.ts";

export type ClientOptions = {
  /** The service's base address, no trailing slash. */
  url: string;
  apiKey: string;
  /** Narrows lists to one environment (X-Environment-Id, CONTRACT 5); null: every environment. */
  environmentId: string | null;
};

type Env = Record<string, string | undefined>;

export const DEFAULT_URL = "http://127.0.0.1:8080";

export const CLIENT_FLAGS = ["url", "api-key", "environment"] as const;

/** parseFlags, its one-line refusal as exit 2. */
export function flagsOf(args: string[], spec: { strings?: readonly string[]; booleans?: readonly string[] }): Flags {
  try {
    return parseFlags(args, spec);
  } catch (err) {
    throw err instanceof ArgsError ? usage(err.message) : err;
  }
}

export function clientOptions(flags: Flags, env: Env): ClientOptions {
  const rawUrl = flags.strings.url ?? (env.VECSYNC_URL || DEFAULT_URL);
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw usage(`${flags.strings.url !== undefined ? "--url" : "VECSYNC_URL"} must be an http(s) URL (got "${rawUrl}")`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw usage(`the service URL must be http or https (got "${rawUrl}")`);
  const apiKey = flags.strings["api-key"] ?? env.VECSYNC_API_KEY;
  if (!apiKey) throw usage("an API key is needed: set VECSYNC_API_KEY (or pass --api-key)");
  const environmentId = flags.strings.environment ?? (env.VECSYNC_ENVIRONMENT_ID || null);
  return { url: url.href.replace(/\/+$/, ""), apiKey, environmentId };
}
