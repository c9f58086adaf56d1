// What held the event loop: the longest busy stretches of a service's CPU profile and what ran in
// each, in order. A query that arrives during a stretch waits for its end, so a stretch longer than
// the query p99 target names what to shorten. Bun's .cpuprofile holds only busy samples: a stretch
// is a run of samples no further apart than `--gap-us` (default 1,000 µs; profile at 250 µs,
// `bench pipeline --profile-json DIR`). A sample with no stack is the collector or native code
// outside any JS call.
//
//   bun run scripts/bench/holds.ts FILE.cpuprofile [--min-ms 25] [--top 8] [--gap-us 1000]
//     [--from-s S] [--to-s S]   only stretches starting in that window of the profile
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Profile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const argv = process.argv.slice(2);
const opt = (name: string, fallback: number) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback);
const file = argv[0];
if (!file) throw new Error("usage: holds.ts FILE.cpuprofile [--min-ms 25] [--top 8] [--gap-us 1000]");
const MIN_MS = opt("--min-ms", 25);
const TOP = opt("--top", 8);
const GAP_US = opt("--gap-us", 1000);
const FROM_S = opt("--from-s", 0);
const TO_S = opt("--to-s", Infinity);

const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** A node's frames, innermost first, without the root. */
function stackOf(id: number): CallFrame[] {
  const out: CallFrame[] = [];
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const frame = frames.get(at)!;
    if (frame.functionName !== "(root)") out.push(frame);
  }
  return out;
}

function short(frame: CallFrame): string {
  const at = Math.max(frame.url.indexOf("/src/"), frame.url.indexOf("node_modules/"));
  return `${frame.functionName || "(anonymous)"} ${at >= 0 ? frame.url.slice(at) : frame.url.split("/").pop()}:${frame.lineNumber}`;
}

const ours = (frame: CallFrame) => frame.url.includes("/src/");
const labels = new Map<number, { outer: string; inner: string }>();
/** A sample's outermost and innermost frames of our own code (else its innermost frame). */
function labelOf(id: number): { outer: string; inner: string } {
  let found = labels.get(id);
  if (found) return found;
  const stack = stackOf(id);
  const own = stack.filter(ours);
  const none = stack.length === 0 ? "(no stack: collector or native)" : short(stack[0]!);
  found = own.length === 0 ? { outer: none, inner: none } : { outer: short(own[own.length - 1]!), inner: stack[0] === own[0] ? short(own[0]!) : `${short(own[0]!)} > ${none}` };
  labels.set(id, found);
  return found;
}

const times: number[] = [];
let t = profile.startTime;
for (const d of profile.timeDeltas) times.push((t += d));
const stretches: { from: number; to: number; ms: number }[] = [];
for (let from = 0, k = 1; k <= times.length; k++) {
  if (k < times.length && times[k]! - times[k - 1]! <= GAP_US) continue;
  const startS = (times[from]! - profile.startTime) / 1e6;
  if (startS >= FROM_S && startS < TO_S) stretches.push({ from, to: k, ms: (times[k - 1]! - times[from]!) / 1000 });
  from = k;
}

const long = stretches.filter((s) => s.ms >= MIN_MS);
const seconds = Math.min(TO_S, (times[times.length - 1]! - profile.startTime) / 1e6) - FROM_S;
console.log(`${stretches.length} busy stretches in ${seconds.toFixed(0)} s; ${long.length} of ${MIN_MS} ms or more; longest ${[...stretches].sort((a, b) => b.ms - a.ms).slice(0, 10).map((s) => s.ms.toFixed(1)).join(", ")} ms`);

for (const s of [...long].sort((a, b) => b.ms - a.ms).slice(0, TOP)) {
  console.log(`\n${s.ms.toFixed(1)} ms at ${((times[s.from]! - profile.startTime) / 1e6).toFixed(2)} s:`);
  const runs: { label: string; us: number }[] = [];
  for (let k = s.from; k < s.to - 1; k++) {
    const { outer, inner } = labelOf(profile.samples[k]!);
    const label = outer === inner ? outer : `${outer} … ${inner}`;
    const us = times[k + 1]! - times[k]!;
    if (runs.length > 0 && runs[runs.length - 1]!.label === label) runs[runs.length - 1]!.us += us;
    else runs.push({ label, us });
  }
  for (const run of runs) if (run.us >= 500) console.log(`  ${(run.us / 1000).toFixed(1).padStart(6)} ms  ${run.label}`);
}

const shares = new Map<string, number>();
let total = 0;
for (const s of long) {
  for (let k = s.from; k < s.to - 1; k++) {
    const us = times[k + 1]! - times[k]!;
    const { inner } = labelOf(profile.samples[k]!);
    shares.set(inner, (shares.get(inner) ?? 0) + us);
    total += us;
  }
}
console.log(`\nshares of the time inside those stretches, by innermost frame:`);
for (const [label, us] of [...shares].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`  ${((100 * us) / total).toFixed(1).padStart(5)} %  ${label}`);
