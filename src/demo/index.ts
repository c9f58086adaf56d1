// `vecsync demo` / `bun run demo`: a guided tour of the main job on a throwaway service and a
// throwaway sample table, printing the curl command of every step. Returns the exit code.
import { DemoApi } from "./client.ts";
import { DEMO_HELP, demoOptions, DemoUsageError, type DemoOptions } from "./options.ts";
import { createOutput, type Output } from "./output.ts";
import { createConnection, createOrganization, createProvider, createVectorTable, signIn } from "./setup.ts";
import { openPostgresSource, type DemoSource } from "./source.ts";
import { startDemoService, type DemoService } from "./service.ts";
import { backfill, runQueries, showSyncPickup } from "./tour.ts";

export type { DemoSource } from "./source.ts";

export type DemoHooks = {
  /** Another sample source when Postgres does not answer (a source checkout's test servers). */
  fallbackSource?: () => Promise<{ source: DemoSource; description: string }>;
};

async function openSource(out: Output, options: DemoOptions, hooks: DemoHooks): Promise<DemoSource | null> {
  out.step("Sample source table: 200 products");
  const opened = await openPostgresSource(options.pgUrl);
  if ("source" in opened) {
    out.note(opened.source.description);
    return opened.source;
  }
  out.note(`Postgres is not reachable at ${shownUrl(options.pgUrl)} (${opened.unreachable}).`);
  if (!hooks.fallbackSource) {
    out.note("Start one, or point VECSYNC_DEMO_PG_URL at one; `bun run demo` in a source checkout can use the warehouse test server instead.");
    return null;
  }
  const fallback = await hooks.fallbackSource();
  out.note(`Using ${fallback.description} instead.`);
  out.note(fallback.source.description);
  return fallback.source;
}

async function tour(out: Output, service: DemoService, source: DemoSource, options: DemoOptions): Promise<void> {
  out.step("Start the service");
  out.note(`vecsync listening on ${service.url}   (data dir ${service.dataDir})`);
  out.note("# the same as: vecsync serve --port 0 --data-dir <dir>   with VECSYNC_SYNC_INTERVAL=2");
  const api = new DemoApi(service.url, out);
  await signIn(api, out, service.outbox);
  await createOrganization(api, out);
  const providerId = await createProvider(api, out, options.provider);
  const connectionId = await createConnection(api, out, source);
  const table = await createVectorTable(api, out, source, { connectionId, providerId }, options.provider);
  await backfill(api, out, table);
  await runQueries(api, out, source, table);
  await showSyncPickup(api, out, source, table, options.serviceEnv.VECSYNC_SYNC_INTERVAL!);
}

/** A URL as printed: its password, if any, hidden. */
function shownUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return "(not a URL)";
  }
}

export async function runDemo(args: string[], env: Record<string, string | undefined>, hooks: DemoHooks = {}): Promise<number> {
  if (args.includes("--help") || args.includes("-h")) {
    console.log(DEMO_HELP);
    return 0;
  }
  let options: DemoOptions;
  try {
    options = demoOptions(args, env);
  } catch (err) {
    if (!(err instanceof DemoUsageError)) throw err;
    console.error(`vecsync demo: ${err.message}\n\n${DEMO_HELP}`);
    return 2;
  }
  const out = createOutput();
  const started = Date.now();
  const resources = demoResources(out, options.keep);
  let wasInterrupted = false;
  const interrupted = () => {
    wasInterrupted = true;
    out.line();
    out.line("demo interrupted");
    void resources.cleanUp().finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupted);
  try {
    const source = await resources.openSource(() => openSource(out, options, hooks));
    if (!source) return 1;
    const service = await resources.startService(() => startDemoService({ ...options.serviceEnv, ...source.serviceEnv }));
    await tour(out, service, source, options);
  } catch (err) {
    // After an interrupt the clean-up pulls the service away under the tour: not a failure to report.
    if (wasInterrupted) return 130;
    out.line();
    out.line(`demo failed: ${(err as Error).message}`);
    return 1;
  } finally {
    process.off("SIGINT", interrupted);
    await resources.cleanUp();
  }
  out.line();
  out.line(`demo finished in ${((Date.now() - started) / 1000).toFixed(1)} s. The API reference: GET /docs on a running service (vecsync serve).`);
  return 0;
}

/** What the demo sets up, torn down once, whether the tour ends, fails or is interrupted. */
function demoResources(out: Output, keep: boolean) {
  let opening: Promise<DemoSource | null> | null = null;
  let starting: Promise<DemoService> | null = null;
  let cleaning: Promise<void> | null = null;
  const settled = async <T>(p: Promise<T> | null): Promise<T | null> => (p ? p.catch(() => null) : null);
  return {
    openSource: (open: () => Promise<DemoSource | null>) => (opening = open()),
    startService: (start: () => Promise<DemoService>) => (starting = start()),
    cleanUp: () =>
      (cleaning ??= (async () => {
        // An interrupt may land while either is still being set up: wait for it, then undo it.
        const service = await settled(starting);
        const source = await settled(opening);
        if (!source && !service) return;
        out.step("Clean up");
        await service?.stop(keep);
        if (service && keep) out.note(`kept the data dir: vecsync serve --data-dir ${service.dataDir}`);
        const kept = await source?.close(keep);
        out.note(kept ?? "stopped the service, removed the data dir and the sample data");
      })()),
  };
}
