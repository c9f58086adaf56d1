// `bun run bench embed [hosted|local]`: drives short texts through each hosted driver against its
// fake, the fake enforcing a rate limit, and reports the throughput reached as a fraction of that
// limit (target ≥ 0.9), the 429s received and the wall time; then the local models: texts/s on 1
// and 2 cores and recall@10 on a labelled retrieval set (lib/local-models.ts). An argument runs
// only that half.
//
// Defaults: 100,000 texts per provider, limit 3,000 requests/min and 1,000,000 tokens/min with a
// 6-second burst allowance on the fake (providers enforce per-minute limits over short windows).
// The texts average ~10 fake tokens, so the token limit binds: about a minute per provider.
// Two "tasks" share one key and feed pages of 2,000 texts, as two backfills would.
// Scale with BENCH_TEXTS and BENCH_SCALE (multiplies both limits): time ∝ texts / scale.
import { createEmbeddingProvider, type ProviderName } from "../../src/drivers/embeddings/index.ts";
import { startFakeEmbeddings } from "../../test/fakes/embeddings/server.ts";
import { benchLocalModels } from "./lib/local-models.ts";

const TOTAL = Number(process.env.BENCH_TEXTS ?? 100_000);
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const LIMIT = { requestsPerMinute: 3000 * SCALE, tokensPerMinute: 1_000_000 * SCALE, burstSec: 6 };
/** What the driver is told the limit is, as a multiple of the fake's (BENCH_BELIEF=2: a wrong guess). */
const BELIEF = Number(process.env.BENCH_BELIEF ?? 1);
const PAGE = 2000;
const TASKS = 2;
const WARMUP_MS = 10_000;

const WORDS = "order customer shipped invoice blue large refund pending widget account premium delayed north south review".split(" ");
const text = (i: number) => `item ${i} ${WORDS[i % 15]} ${WORDS[(i * 7) % 15]} ${WORDS[(i * 11) % 15]}`;

// 256 dimensions (asked of the provider) keep the JSON small enough that two shared cores are not
// the bottleneck. The last case is request-bound: Vertex takes one text per gemini-embedding-001
// request, so 100,000 texts would take 33 minutes at 3,000 requests/min; it runs 3,000 texts.
const CASES: { provider: Exclude<ProviderName, "local">; model: string; dims: number; texts: number }[] = [
  { provider: "emb_a", model: "text-embedding-3-small", dims: 256, texts: TOTAL },
  { provider: "emb_b", model: "text-embedding-005", dims: 256, texts: TOTAL },
  { provider: "emb_c", model: "emb_c-3.5", dims: 256, texts: TOTAL },
  { provider: "emb_b", model: "emb_b-embedding-001", dims: 256, texts: Math.round(TOTAL * 0.03) },
];

async function runHosted(c: (typeof CASES)[number]) {
  await using fake = await startFakeEmbeddings(c.provider, { switches: { rateLimit: LIMIT, record: false, latencyMs: 20, latencyJitterMs: 30 } });
  const believed = { requestsPerMinute: LIMIT.requestsPerMinute * BELIEF, tokensPerMinute: LIMIT.tokensPerMinute * BELIEF };
  const driver = () =>
    createEmbeddingProvider({ provider: c.provider, apiKey: fake.apiKey, baseUrl: fake.url, tuning: { rateLimits: believed, concurrency: 4 } });
  const drivers = Array.from({ length: TASKS }, driver);
  let nextPage = 0;
  const pages = Math.ceil(c.texts / PAGE);
  const started = performance.now();
  let warm: { t: number; tokens: number; served: number } | null = null;
  const progress = setInterval(() => {
    const s = (performance.now() - started) / 1000;
    if (!warm && s * 1000 >= WARMUP_MS) warm = { t: performance.now(), tokens: fake.counters.tokens, served: fake.counters.served };
    console.log(`  ${c.provider} ${s.toFixed(0)}s: ${fake.counters.inputs}/${c.texts} texts, ${fake.counters.rateLimited} 429s`);
  }, 5_000);
  let vectors = 0;
  await Promise.all(
    drivers.map(async (d) => {
      for (let p = nextPage++; p < pages; p = nextPage++) {
        const batch = Array.from({ length: Math.min(PAGE, c.texts - p * PAGE) }, (_, i) => text(p * PAGE + i));
        const out = await d.embed(batch, { model: c.model, dimensions: c.dims, kind: "document" });
        vectors += out.length;
      }
    }),
  );
  clearInterval(progress);
  const end = performance.now();
  const wallMin = (end - started) / 60_000;
  const { tokens, served, rateLimited } = fake.counters;
  const steady = warm as { t: number; tokens: number; served: number } | null;
  const steadyMin = steady ? (end - steady.t) / 60_000 : 0;
  return {
    provider: c.provider,
    model: c.model,
    texts: vectors,
    requests: served,
    "429s": rateLimited,
    wall_s: +(wallMin * 60).toFixed(1),
    "tokens/min": Math.round(tokens / wallMin),
    "fraction of tpm": +(tokens / wallMin / LIMIT.tokensPerMinute).toFixed(3),
    "fraction of rpm": +(served / wallMin / LIMIT.requestsPerMinute).toFixed(3),
    "steady fraction of tpm": steady ? +((tokens - steady.tokens) / steadyMin / LIMIT.tokensPerMinute).toFixed(3) : null,
    "steady fraction of rpm": steady ? +((served - steady.served) / steadyMin / LIMIT.requestsPerMinute).toFixed(3) : null,
  };
}

const only = process.argv[3];
if (only !== undefined && only !== "hosted" && only !== "local") {
  console.error("usage: bun run bench embed [hosted|local]");
  process.exit(2);
}
if (only !== "local") {
  console.log(`embedding bench: ${TOTAL} texts per provider; fake limit ${LIMIT.requestsPerMinute} req/min, ${LIMIT.tokensPerMinute} tokens/min (burst ${LIMIT.burstSec}s)`);
  const rows = [];
  for (const c of CASES) rows.push(await runHosted(c));
  console.table(rows);
}
if (only !== "hosted") await benchLocalModels();
