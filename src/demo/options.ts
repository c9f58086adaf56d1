// The demo's settings. They are not service settings (config.ts holds those): the caller hands
// in its environment and arguments, and this is the one place that reads them.
import { ArgsError, parseFlags } from "../shared/args.ts";
import { modelsOf, PROVIDERS, type ProviderName } from "../drivers/embeddings/catalog.ts";

export const DEFAULT_DEMO_PG_URL = "postgres://postgres@127.0.0.1:5432/postgres";

export type DemoProvider = { provider: ProviderName; apiKey: string | null; model: string; dimensions: number };

export type DemoOptions = {
  /** Keep the sample database and the service's data directory after the demo. */
  keep: boolean;
  pgUrl: string;
  provider: DemoProvider;
  /** Settings passed on to the in-process service: only these, never the caller's whole environment. */
  serviceEnv: Record<string, string>;
};

export class DemoUsageError extends Error {}

/** Service settings a demo run may take from the caller's environment (hosted provider gateways, log level). */
const PASSED_ON = ["VECSYNC_EMB_A_URL", "VECSYNC_EMB_B_URL", "VECSYNC_EMB_C_URL", "VECSYNC_LOG_LEVEL"] as const;

/** The offline model that finds a product from a paraphrase (the tour's second query shows it). */
const LOCAL_DEMO_MODEL = "local-semantic-v1";

/** Batch sync passes every 2 s, so the edited row shows up within a few seconds. */
const DEMO_SYNC_INTERVAL_SEC = "2";

function providerOf(env: Record<string, string | undefined>): DemoProvider {
  const name = env.VECSYNC_DEMO_PROVIDER?.trim() || "local";
  if (!PROVIDERS.includes(name as ProviderName)) throw new DemoUsageError(`VECSYNC_DEMO_PROVIDER must be one of ${PROVIDERS.join(", ")} (got "${name}")`);
  const provider = name as ProviderName;
  const apiKey = env.VECSYNC_DEMO_API_KEY?.trim() || null;
  if (provider !== "local" && !apiKey) throw new DemoUsageError(`VECSYNC_DEMO_PROVIDER=${provider} needs VECSYNC_DEMO_API_KEY`);
  const models = modelsOf(provider);
  const model = env.VECSYNC_DEMO_MODEL?.trim() || (provider === "local" ? LOCAL_DEMO_MODEL : models[0]!.model);
  const spec = models.find((m) => m.model === model);
  if (!spec) throw new DemoUsageError(`VECSYNC_DEMO_MODEL must be one of ${models.map((m) => m.model).join(", ")} (got "${model}")`);
  return { provider, apiKey: provider === "local" ? null : apiKey, model, dimensions: spec.dimensions };
}

export function demoOptions(args: string[], env: Record<string, string | undefined>): DemoOptions {
  let keep: boolean;
  try {
    keep = parseFlags(args, { booleans: ["keep"] }).booleans.has("keep");
  } catch (err) {
    if (err instanceof ArgsError) throw new DemoUsageError(`${err.message} (the demo takes only --keep)`);
    throw err;
  }
  const serviceEnv: Record<string, string> = { VECSYNC_LOG_LEVEL: "error", VECSYNC_SYNC_INTERVAL: DEMO_SYNC_INTERVAL_SEC };
  for (const name of PASSED_ON) if (env[name]) serviceEnv[name] = env[name]!;
  return { keep, pgUrl: env.VECSYNC_DEMO_PG_URL?.trim() || DEFAULT_DEMO_PG_URL, provider: providerOf(env), serviceEnv };
}

export const DEMO_HELP = `usage: vecsync demo [--keep]

A guided tour on a throwaway service (temp data dir, a free port): signs in, creates an
organization, an embedding provider, a connection and a vector table over 200 sample products,
backfills them, runs four queries, edits a product and watches sync pick it up. Every step
prints the curl command that does the same.

The sample table goes into a new database vecsync_demo_<random> on the local Postgres
(VECSYNC_DEMO_PG_URL, default ${DEFAULT_DEMO_PG_URL}), dropped at the end.
Without a reachable Postgres the binary stops; \`bun run demo\` in a source checkout falls back to
the warehouse test server instead (test code, not shipped in the binary).

  --keep                  keep the sample database and the data directory
  VECSYNC_DEMO_PROVIDER   local (default, offline, no key) | emb_a | emb_b | emb_c
  VECSYNC_DEMO_API_KEY    the provider's API key (hosted providers)
  VECSYNC_DEMO_MODEL      a model of that provider (default: local-semantic-v1 for local, else
                          the provider's first in the catalog)`;
