/**
 * Retry delays: exponential with "equal jitter". After failed run n (1-based) the base delay is
 * min(capMs, baseMs · 2^(n-1)); the task waits between half of it and all of it, so workers that
 * failed together (say, a provider outage) do not retry in lock-step.
 *
 * Defaults: base 5 s, cap 10 min. For backfill's 3 attempts that is ~2.5-5 s then ~5-10 s; for
 * org_deletion's 5 attempts ~5 s, 10 s, 20 s, 40 s (upper bounds), about 75 s in all at most —
 * long enough to ride out a restarting dependency, short enough that a user sees the outcome soon.
 */
export type BackoffOptions = { baseMs: number; capMs: number };

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 5_000, capMs: 600_000 };

export function retryDelayMs(failedRuns: number, opts: BackoffOptions = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const exponent = Math.max(0, failedRuns - 1);
  const full = Math.min(opts.capMs, opts.baseMs * 2 ** exponent);
  return Math.round(full / 2 + (random() * full) / 2);
}
