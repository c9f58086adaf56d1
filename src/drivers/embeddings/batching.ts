// Splits inputs into requests that respect a provider's two per-request ceilings: the number of
// inputs and the tokens summed over them. Order is kept: a batch is a run of consecutive inputs,
// so answers map back by position.

export type Batch = { start: number; end: number; tokens: number };

export function planBatches(tokenCounts: readonly number[], maxInputs: number, maxTokens: number): Batch[] {
  const batches: Batch[] = [];
  let start = 0;
  let tokens = 0;
  for (let i = 0; i < tokenCounts.length; i++) {
    const t = tokenCounts[i]!;
    const full = i - start >= maxInputs || (i > start && tokens + t > maxTokens);
    if (full) {
      batches.push({ start, end: i, tokens });
      start = i;
      tokens = 0;
    }
    tokens += t;
  }
  if (tokenCounts.length > start) batches.push({ start, end: tokenCounts.length, tokens });
  return batches;
}
