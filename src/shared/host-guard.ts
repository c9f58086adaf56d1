// The host guard (docs/api.md#host-guard), one for everything a user points us at: a source
// connection's host and an embedding provider's `base_url` may not reach link-local or
// cloud-metadata addresses, however the host is spelled. The host is resolved ONCE per use; every
// resolved address is checked, and the caller connects to the checked address (the name travels on
// only as the TLS server name and the Host header), so a DNS answer that changes between check and
// connect (rebinding) cannot slip past.
//
// Loopback and private ranges stay allowed: self-hosted users point at databases and model servers
// on their own machine or network. `VECSYNC_DENY_HOSTS` always refuses; `VECSYNC_ALLOW_HOSTS` lifts
// the default refusal (but never a deny entry). Entries are CIDRs, single addresses, host names, or `*.suffix`.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { AppError, DriverError } from "./errors.ts";
import { formatAddress, parseAddress, parseCidr, cidrContains, embeddedIPv4, embeddedIPv4s, type Address, type Cidr } from "./ip.ts";

/** Refused unless allowed: IPv4 and IPv6 link-local, and the metadata endpoints clouds put elsewhere. */
export const DEFAULT_DENIED: readonly Cidr[] = [
  "169.254.0.0/16", // IPv4 link-local, incl. 169.254.169.254 (AWS, GCP, Azure, OCI metadata)
  "fe80::/10", // IPv6 link-local
  "fd00:ec2::254/128", // AWS metadata over IPv6
  "100.100.100.200/32", // Alibaba Cloud metadata
].map((c) => parseCidr(c)!);

/**
 * Names refused unless allowed, whatever they resolve to here: GCP's metadata server answers to
 * both inside a VM (and outside one a name may resolve anywhere, so the name itself is the rule).
 */
export const DEFAULT_DENIED_NAMES: readonly string[] = ["metadata.google.internal", "metadata"];

export type HostRule = { kind: "cidr"; cidr: Cidr } | { kind: "name"; name: string } | { kind: "suffix"; suffix: string };

export type HostPolicy = { deny: HostRule[]; allow: HostRule[] };

const NAME = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

/** Lowercased, without brackets around an IPv6 literal, a zone id, or a trailing dot. */
export function normaliseHostName(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (isIP(h.replace(/%.*$/, "")) === 6) h = h.replace(/%.*$/, "");
  return h.endsWith(".") ? h.slice(0, -1) : h;
}

/** True when `host` is a DNS name or an IP address (never a socket path, URL or host:port). */
export function isValidHost(host: string): boolean {
  const h = normaliseHostName(host);
  return parseAddress(h) !== null || NAME.test(h);
}

export function parseHostRule(entry: string): HostRule {
  const text = normaliseHostName(entry);
  if (text.includes("/")) {
    const cidr = parseCidr(text);
    if (!cidr) throw new Error(`"${entry}" is not a valid CIDR`);
    return { kind: "cidr", cidr };
  }
  const address = parseAddress(text);
  if (address) return { kind: "cidr", cidr: { address, prefix: address.bytes.length * 8 } };
  if (text.startsWith("*.") && NAME.test(text.slice(2))) return { kind: "suffix", suffix: text.slice(1) };
  if (NAME.test(text)) return { kind: "name", name: text };
  throw new Error(`"${entry}" is neither a CIDR, an address nor a host name`);
}

const policies = new WeakMap<object, HostPolicy>();

/** The policy of a configuration (parsed once per config object); a bad entry throws. */
export function hostPolicy(config: { denyHosts: string[]; allowHosts: string[] }): HostPolicy {
  let policy = policies.get(config);
  if (!policy) {
    const rules = (entries: string[], variable: string) =>
      entries.map((entry) => {
        try {
          return parseHostRule(entry);
        } catch (err) {
          throw new Error(`${variable}: ${(err as Error).message}`);
        }
      });
    policy = { deny: rules(config.denyHosts, "VECSYNC_DENY_HOSTS"), allow: rules(config.allowHosts, "VECSYNC_ALLOW_HOSTS") };
    policies.set(config, policy);
  }
  return policy;
}

const nameMatches = (rule: HostRule, name: string) =>
  (rule.kind === "name" && rule.name === name) || (rule.kind === "suffix" && name.endsWith(rule.suffix));

/** The address itself, plus every IPv4 address an IPv6 one embeds (mapped, NAT64, 6to4, Teredo…). */
const formsOf = (address: Address): Address[] => [address, ...embeddedIPv4s(address)];

const inAny = (cidrs: readonly Cidr[], address: Address) => formsOf(address).some((a) => cidrs.some((c) => cidrContains(c, a)));
const cidrsOf = (rules: HostRule[]) => rules.flatMap((r) => (r.kind === "cidr" ? [r.cidr] : []));

/** Why a host is refused: the address that failed (null: the name itself) and whether DNS gave it. */
type Refusal = { address: Address | null; resolved: boolean; why: string };

const DENY_LISTED = "it is on the deny list (VECSYNC_DENY_HOSTS)";
const METADATA = "link-local and cloud-metadata addresses are refused (VECSYNC_ALLOW_HOSTS can allow them)";

function nameRefusal(name: string, policy: HostPolicy): Refusal | null {
  if (policy.deny.some((r) => nameMatches(r, name))) return { address: null, resolved: false, why: DENY_LISTED };
  if (!DEFAULT_DENIED_NAMES.includes(name) || policy.allow.some((r) => nameMatches(r, name))) return null;
  return { address: null, resolved: false, why: METADATA };
}

function addressRefusal(name: string, address: Address, resolved: boolean, policy: HostPolicy): Refusal | null {
  if (inAny(cidrsOf(policy.deny), address)) return { address, resolved, why: DENY_LISTED };
  if (!inAny(DEFAULT_DENIED, address)) return null;
  const allowed = policy.allow.some((r) => nameMatches(r, name)) || inAny(cidrsOf(policy.allow), address);
  return allowed ? null : { address, resolved, why: METADATA };
}

/** The 400 for a refusal, at `path` (the request field that carried the host). */
function refused(name: string, refusal: Refusal, path: string): AppError {
  const address = refusal.address ? formatAddress(refusal.address) : null;
  const where = refusal.resolved ? ` (resolves to ${address})` : "";
  const message = `The host "${name}"${where} is not allowed: ${refusal.why}`;
  const detail = `${refusal.resolved ? `"${name}" resolves to ${address}; ` : ""}${refusal.why}`;
  return new AppError("validation_error", message, { details: [{ path, message: detail }] });
}

/** Where a refusal is reported by default: a connection's credentials. */
const CONNECTION_HOST = "credentials.host";

function spellingRefusal(name: string, policy: HostPolicy): Refusal | null {
  const literal = parseAddress(name);
  return nameRefusal(name, policy) ?? (literal ? addressRefusal(name, literal, false, policy) : null);
}

/**
 * The check that needs no DNS, for create and update: a denied name, or a literal address (in any
 * spelling) that is refused. Names are resolved, and their addresses checked, when the host is used.
 */
export function checkHostSpelling(host: string, policy: HostPolicy, path = CONNECTION_HOST): void {
  const name = normaliseHostName(host);
  const refusal = spellingRefusal(name, policy);
  if (refusal) throw refused(name, refusal, path);
}

/** The same check for callers that collect problems: why `host` is refused (without echoing it), or null. */
export function hostSpellingProblem(host: string, policy: HostPolicy): string | null {
  return spellingRefusal(normaliseHostName(host), policy)?.why ?? null;
}

export type Resolver = (name: string) => Promise<Address[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address it answers. */
export const systemResolver: Resolver = async (name) => {
  try {
    const answers = await lookup(name, { all: true, order: "verbatim" });
    return answers.flatMap((a) => parseAddress(a.address) ?? []);
  } catch (err) {
    const code = (err as { code?: string }).code ?? "unknown error";
    throw new DriverError(`could not resolve host "${name}": ${code}`, { retryable: code === "EAI_AGAIN", cause: err, context: { code } });
  }
};

/** What the caller dials: the address, and the name for TLS and Host (absent for a literal). */
export type VettedHost = { address: string; servername?: string };

/**
 * Resolves `host` once and checks every address; refusals are 400 (at `path`), DNS failures
 * DriverErrors. The caller must dial `address`, never the name again.
 */
export async function vetHost(host: string, policy: HostPolicy, resolve: Resolver = systemResolver, path = CONNECTION_HOST): Promise<VettedHost> {
  checkHostSpelling(host, policy, path);
  const name = normaliseHostName(host);
  const literal = parseAddress(name);
  const addresses = literal ? [literal] : await resolve(name);
  const first = addresses[0];
  if (!first) throw new DriverError(`could not resolve host "${name}": no addresses`, { retryable: false });
  for (const address of addresses) {
    const refusal = addressRefusal(name, address, !literal, policy);
    if (refusal) throw refused(name, refusal, path);
  }
  // IPv4 first when the name has both (a mapped IPv6 address is the IPv4 address it stands for).
  const dialable = addresses.map((a) => (isMapped(a) ? embeddedIPv4(a)! : a));
  const dial = formatAddress(dialable.find((a) => a.bytes.length === 4) ?? first);
  return literal ? { address: dial } : { address: dial, servername: name };
}

const isMapped = (a: Address) => a.bytes.length === 16 && a.bytes.slice(0, 10).every((b) => b === 0) && a.bytes[10] === 0xff && a.bytes[11] === 0xff;
