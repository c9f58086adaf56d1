// The client's address, for the per-address sign-in limits (docs/security.md#behind-a-proxy).
//
// By default it is the socket peer, and no header is believed: anyone can send X-Forwarded-For.
// Behind a reverse proxy every request's peer is the proxy, so per-address limits would become one
// limit for everyone (30 code requests from one client would lock sign-in out for all). The
// operator names the proxies in VECSYNC_TRUSTED_PROXIES; for a request whose peer is one of them,
// the client is the rightmost X-Forwarded-For entry that is not a trusted proxy: each proxy appends
// the address it saw, so entries to the left of it may be forged, the ones it appended may not.
import { cidrContains, embeddedIPv4, formatAddress, parseAddress, type Address, type Cidr } from "../shared/ip.ts";

const trusted = (proxies: readonly Cidr[], address: Address) => proxies.some((c) => cidrContains(c, address));

// An IPv4 client reached over an IPv6 socket is the IPv4 address.
function unmapped(address: Address): Address {
  const b = address.bytes;
  const mapped = b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  return mapped ? embeddedIPv4(address)! : address;
}

/**
 * The address a rate limit counts: an IPv4 address as itself, an IPv6 one by its /64 — the block
 * one subscriber or host holds, so that stepping through its 2^64 addresses is one client.
 */
export function rateKey(address: Address): string {
  const a = unmapped(address);
  if (a.bytes.length === 4) return formatAddress(a);
  const prefix = new Uint8Array(16);
  prefix.set(a.bytes.slice(0, 8));
  return `${formatAddress({ bytes: prefix })}/64`;
}

/** The client behind the socket peer `peer`, as rate limits count it; null when there is no peer. */
export function clientAddress(peer: string | null, headers: Headers, proxies: readonly Cidr[]): string | null {
  const peerAddress = peer === null ? null : parseAddress(peer.replace(/%.*$/, ""));
  if (!peerAddress) return peer;
  let client = unmapped(peerAddress);
  const forwarded = headers.get("x-forwarded-for");
  if (proxies.length && forwarded && trusted(proxies, client)) {
    const hops = forwarded.split(",").map((h) => h.trim());
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseAddress(hops[i]!.replace(/^\[|\]$/g, ""));
      if (!hop) break; // not an address: a proxy of ours would not write it; keep the last one believed
      client = unmapped(hop);
      if (!trusted(proxies, client)) break;
    }
  }
  return rateKey(client);
}
