// The query prober of `bench pipeline` and `bench freshness` (pipeline-backfill.ts startProber), on
// a thread of its own: one top-10 query every `everyMs` (default 50; 0: one after another, without
// pause) until told to stop, then the latencies of the answers. It says "warm" once its first
// answer is in, so a phase can start beside clients already running rather than starting up.
import { Api } from "./api.ts";

declare const self: Worker;

const PROBE_EVERY_MS = 50;
const WORDS = ["item", "description", "river", "copper", "garden", "signal", "harbor", "meadow"];

let stopped = false;

self.onmessage = (event: MessageEvent) => {
  if (event.data === "stop") {
    stopped = true;
    return;
  }
  const { url, headers, tableId, everyMs } = event.data as { url: string; headers: Record<string, string>; tableId: string; everyMs?: number };
  void probe(new Api(url, headers), tableId, everyMs ?? PROBE_EVERY_MS);
};

async function probe(api: Api, tableId: string, everyMs: number): Promise<void> {
  const times: number[] = [];
  let errors = 0;
  for (let i = 0; !stopped; i++) {
    const started = performance.now();
    try {
      await api.call("POST", `/v1/vector-tables/${tableId}/query`, { query: `${WORDS[i % WORDS.length]} ${i * 7919}`, limit: 10 });
      times.push(performance.now() - started);
    } catch {
      errors++; // 409 before the first rows are stored, for one
    }
    if (i === 0) self.postMessage("warm");
    const wait = everyMs - (performance.now() - started);
    if (wait > 0) await Bun.sleep(wait);
  }
  self.postMessage({ times, errors });
}
