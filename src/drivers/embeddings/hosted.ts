// The machinery shared by the three hosted drivers, written once: model check, truncation,
// batching on both per-request ceilings, a pool of requests in flight, the shared governor,
// retries (http.ts, bad answers included), answer validation and counting. A driver only
// describes its wire format.
import { DriverError } from "../../shared/errors.ts";
import { planBatches } from "./batching.ts";
import { findModel, validateModelChoice, type ModelSpec, type ProviderName } from "./catalog.ts";
import { governorFor, type RateGovernor } from "./governor.ts";
import { send, type UpstreamRequest } from "./http.ts";
import type { UpstreamGuard } from "./pinned.ts";
import { count, emptyStats, type EmbeddingStats } from "./stats.ts";
import { fitInputs, tokenCounterFor } from "./tokenizer.ts";
import type { EmbedKind, EmbeddingObserver, EmbeddingProvider, EmbedOptions, HostedTuning } from "./types.ts";

export type WireBatch = { spec: ModelSpec; texts: string[]; dimensions: number; kind: EmbedKind };

/** What a parsed answer holds: vectors in input order and the provider's token count if given. */
export type WireAnswer = { vectors: unknown[]; tokens: number | null };

export interface WireFormat {
  readonly provider: Exclude<ProviderName, "local">;
  /** True when the provider cuts over-long inputs itself (we then cut only loosely). */
  readonly serverTruncates: boolean;
  request(base: string, apiKey: string, batch: WireBatch): UpstreamRequest;
  /** Pulls vectors out of the answer (number lists or Float32Arrays); throws a plain Error with what is wrong with its shape. */
  parse(json: unknown): WireAnswer;
  /** The same format asking for JSON numbers, where this one asks for a compact encoding some compatible servers refuse. */
  readonly plain?: WireFormat;
}

/** `guard`: set when `baseUrl` is a user's, vetted at every request (pinned.ts). */
export type HostedOptions = { apiKey: string; baseUrl: string; tuning: HostedTuning; observer?: EmbeddingObserver; guard?: UpstreamGuard; turn?: () => Promise<void> };

/** A turn of the event loop, for a provider built outside a service. */
const plainTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class HostedProvider implements EmbeddingProvider {
  readonly stats: EmbeddingStats = emptyStats();
  readonly provider: Exclude<ProviderName, "local">;
  private readonly governor: RateGovernor;
  /** A compact-encoded answer (base64) came back: a 400 after it is not about the encoding. */
  private compactAnswered = false;

  constructor(
    private wire: WireFormat,
    private readonly opts: HostedOptions,
  ) {
    this.provider = wire.provider;
    this.governor = governorFor(wire.provider, opts.baseUrl, opts.apiKey, opts.tuning.rateLimits, { burstSec: opts.tuning.burstSec });
  }

  async embed(texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
    try {
      return await this.embedAll(texts, opts);
    } catch (err) {
      count(this.provider, this.stats, { failures: 1 });
      throw err;
    }
  }

  private checkInputs(texts: string[], opts: EmbedOptions): ModelSpec {
    const problems = validateModelChoice(this.provider, opts.model, opts.dimensions);
    if (problems.length > 0) throw new DriverError(`${this.provider}: ${problems.map((p) => p.message).join("; ")}`, { retryable: false });
    const empty = texts.findIndex((t) => t.trim() === "");
    // Providers reject empty inputs; failing here costs the user nothing.
    if (empty >= 0) throw new DriverError(`${this.provider}: input ${empty} is empty`, { retryable: false });
    return findModel(this.provider, opts.model)!;
  }

  private async embedAll(texts: string[], opts: EmbedOptions): Promise<Float32Array[]> {
    const spec = this.checkInputs(texts, opts);
    if (texts.length === 0) return [];
    const { tuning } = this.opts;
    const maxInputs = Math.min(spec.maxInputsPerRequest, tuning.maxInputsPerRequest ?? Infinity);
    // A request no larger than a quarter of the governor's bucket keeps several in flight.
    const maxTokens = Math.min(spec.maxTokensPerRequest, tuning.maxTokensPerRequest ?? Infinity, Math.max(1, Math.floor(this.governor.tokenCapacity / 4)));
    // Without server truncation the cut must be exact to our count (the provider's own for emb_a);
    // with it, a loose cut at twice the limit only saves bandwidth and lets the provider cut.
    const cutAt = Math.min(this.wire.serverTruncates ? spec.maxTokens * 2 : spec.maxTokens, maxTokens);
    // Counting is foreground work, a query's and a sync's alike: a plain turn between slices
    // (the service's Foreground.turn, shared/foreground.ts), so requests and the sync engine take turns.
    const { texts: prepared, tokens: tokenCounts } = await fitInputs(await tokenCounterFor(this.provider), texts, cutAt, this.opts.turn ?? plainTurn);
    const batches = planBatches(tokenCounts, maxInputs, maxTokens);

    const out = new Array<Float32Array>(texts.length);
    const abort = new AbortController();
    const signal = opts.signal ? AbortSignal.any([opts.signal, abort.signal]) : abort.signal;
    let next = 0;
    const worker = async () => {
      while (next < batches.length && !signal.aborted) {
        const batch = batches[next++]!;
        const wireBatch: WireBatch = { spec, texts: prepared.slice(batch.start, batch.end), dimensions: opts.dimensions, kind: opts.kind };
        const vectors = await this.sendBatch(wireBatch, batch.tokens, signal, opts.onRetry);
        for (let i = 0; i < vectors.length; i++) out[batch.start + i] = vectors[i]!;
      }
    };
    const workers = Array.from({ length: Math.min(tuning.concurrency, batches.length) }, worker);
    try {
      await Promise.all(workers.map((w) => w.catch((err) => (abort.abort(err), Promise.reject(err)))));
    } catch (err) {
      abort.abort(err);
      await Promise.allSettled(workers);
      throw err;
    }
    return out;
  }

  /** The provider's own statement of the key's limits beats our starting guess. */
  private learnLimits(headers: Headers): void {
    const stated = statedLimits(headers);
    if (stated) this.governor.setLimits(stated);
  }

  private async sendBatch(batch: WireBatch, tokens: number, signal: AbortSignal, onRetry?: (message: string) => void): Promise<Float32Array[]> {
    const wire = this.wire;
    try {
      const vectors = await this.sendBatchAs(wire, batch, tokens, signal, onRetry);
      this.compactAnswered ||= wire.plain !== undefined;
      return vectors;
    } catch (err) {
      // A compatible server that refuses the compact encoding answers 400, in words we cannot
      // predict: until one compact answer has come back, a 400 is asked again in numbers, and
      // numbers are used from then on if that works (a 400 for another reason fails again).
      const refused = err instanceof DriverError && err.context.status === 400 && !this.compactAnswered;
      if (!refused || !wire.plain) throw err;
      const vectors = await this.sendBatchAs(wire.plain, batch, tokens, signal, onRetry);
      this.wire = wire.plain;
      return vectors;
    }
  }

  private async sendBatchAs(wire: WireFormat, batch: WireBatch, tokens: number, signal: AbortSignal, onRetry?: (message: string) => void): Promise<Float32Array[]> {
    const { apiKey, baseUrl, tuning, observer, guard } = this.opts;
    const { provider } = this;
    const model = batch.spec.model;
    const label = `${provider} ${model}`;
    // Reading the answer is part of the attempt: an unusable one is asked for again (http.ts).
    const { vectors, billed } = await send(
      wire.request(baseUrl, apiKey, batch),
      {
        label,
        apiKey,
        governor: this.governor,
        tokens,
        priority: batch.kind,
        timeoutMs: tuning.timeoutMs,
        retry: tuning.retry,
        signal,
        guard,
        onAttempt: ({ ok, status, retry, message }) => {
          count(provider, this.stats, { requests: 1, retries: retry ? 1 : 0, rateLimited: status === 429 ? 1 : 0 });
          observer?.request({ provider, model, ok, status });
          if (retry && message) onRetry?.(message);
        },
      },
      (answer) => {
        this.learnLimits(answer.headers);
        let parsed: WireAnswer;
        try {
          parsed = wire.parse(answer.json);
        } catch (err) {
          throw new Error(`answered 200 with a malformed body: ${(err as Error).message}`);
        }
        return { vectors: checkVectors(parsed.vectors, batch.texts.length, batch.dimensions), billed: parsed.tokens ?? tokens };
      },
    );
    this.governor.settle(tokens, billed);
    count(provider, this.stats, { inputs: vectors.length, tokens: billed });
    observer?.tokens({ provider, model, tokens: billed });
    return vectors;
  }
}

/** The limits a provider states in its answers (OpenAI's x-ratelimit-limit-*), if any. */
export function statedLimits(headers: Headers): { requestsPerMinute: number; tokensPerMinute: number } | null {
  const rpm = Number(headers.get("x-ratelimit-limit-requests"));
  const tpm = Number(headers.get("x-ratelimit-limit-tokens"));
  return rpm > 0 && tpm > 0 ? { requestsPerMinute: rpm, tokensPerMinute: tpm } : null;
}

/**
 * Count, dimensions and values must be what we asked for; anything else is a bad answer (thrown as
 * a plain Error saying what is wrong; send() retries it). Values must be JSON numbers: a null
 * (a NaN serialised) or a numeric string would otherwise pass through Float32Array.from as 0 or
 * as a silently converted number. Decoded base64 (Float32Array) must be finite.
 */
function checkVectors(raw: unknown[], expected: number, dimensions: number): Float32Array[] {
  if (raw.length !== expected) throw new Error(`asked for ${expected} embeddings, the answer holds ${raw.length}`);
  return raw.map((v, i) => {
    const isVector = Array.isArray(v) || v instanceof Float32Array;
    if (!isVector || v.length !== dimensions) {
      const got = isVector ? `${v.length} dimensions` : "no vector";
      throw new Error(`embedding ${i} has ${got}, expected ${dimensions}`);
    }
    if (v instanceof Float32Array) {
      const bad = v.findIndex((x) => !Number.isFinite(x));
      if (bad >= 0) throw new Error(`embedding ${i} holds ${v[bad]} at position ${bad}, not a finite number`);
      return v;
    }
    const vec = Float32Array.from(v as number[]);
    // Checked after the conversion too: a double past float32's range becomes Infinity.
    const bad = v.findIndex((x, j) => typeof x !== "number" || !Number.isFinite(vec[j]!));
    if (bad >= 0) throw new Error(`embedding ${i} holds ${JSON.stringify(v[bad]) ?? String(v[bad])} at position ${bad}, not a finite number`);
    return vec;
  });
}
