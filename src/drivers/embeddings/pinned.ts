// A request to a user's `base_url` goes to the address the host guard checked (docs/api.md#host-guard),
// resolved anew for every request: the URL carries the vetted IP, the Host header the original
// host (and port), and for https `tls.serverName` the original name, so SNI and certificate
// verification are against the name the user gave while the socket dials the checked address
// (Bun's fetch: "Connecting to a specific address"). DNS is never asked again between the check and
// the connection, so a name that rebinds to a metadata address cannot slip past.
//
// Proxies: with HTTP(S)_PROXY set, Bun judges it (and NO_PROXY) against the address in the URL;
// the proxy is then asked for the vetted address, so the guard still holds, but a NO_PROXY entry
// naming the host no longer matches. An operator who needs that points VECSYNC_EMB_*_URL (trusted,
// not guarded) at the gateway instead.
import { vetHost, type HostPolicy, type Resolver } from "../../shared/host-guard.ts";

/** How requests to a user-given base URL are vetted; absent for the operator's and the public endpoints. */
export type UpstreamGuard = { policy: HostPolicy; resolve: Resolver };

/** What fetch is given: the URL to dial, headers to add, and the TLS name to verify against. */
export type Dial = { url: string; headers: Record<string, string>; tls?: { serverName: string } };

/**
 * The dial for `url`: unchanged without a guard; else resolved and checked, throwing the guard's
 * AppError (400, at `base_url`) for a refused host and a DriverError when the name does not resolve.
 */
export async function dialFor(url: string, guard: UpstreamGuard | undefined): Promise<Dial> {
  if (!guard) return { url, headers: {} };
  const original = new URL(url);
  const vetted = await vetHost(original.hostname, guard.policy, guard.resolve, "base_url");
  const target = new URL(url);
  target.hostname = vetted.address.includes(":") ? `[${vetted.address}]` : vetted.address;
  const dial: Dial = { url: target.href, headers: { host: original.host } };
  if (original.protocol === "https:" && vetted.servername) dial.tls = { serverName: vetted.servername };
  return dial;
}
