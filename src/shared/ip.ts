// IP address parsing for the host guard. IPv4 follows inet_aton, the spelling the system resolver
// (and so a database driver) accepts: 1-4 parts, each decimal, 0x-hex or 0-leading octal, the last
// part filling the remaining bytes — `127.1`, `2130706433`, `0x7f.0.0.1` and `0177.0.0.1` all mean
// 127.0.0.1. IPv6 in every spelling node:net accepts, including a dotted IPv4 tail.
import { isIP } from "node:net";

/** 4 bytes (IPv4) or 16 bytes (IPv6), network order. */
export type Address = { bytes: Uint8Array };
export type Cidr = { address: Address; prefix: number };

function ipv4Part(part: string): number | null {
  if (/^0x[0-9a-f]+$/i.test(part)) return parseInt(part.slice(2), 16);
  if (/^0[0-7]*$/.test(part)) return parseInt(part, 8);
  if (/^[1-9][0-9]*$/.test(part)) return parseInt(part, 10);
  return null;
}

export function parseIPv4(text: string): Address | null {
  const parts = text.split(".");
  if (parts.length > 4 || parts.some((p) => p.length === 0 || p.length > 12)) return null;
  const numbers = parts.map(ipv4Part);
  if (numbers.some((n) => n === null)) return null;
  const head = numbers.slice(0, -1) as number[];
  const last = numbers.at(-1) as number;
  const tailBytes = 4 - head.length;
  if (head.some((n) => n > 255) || last >= 2 ** (8 * tailBytes)) return null;
  const bytes = new Uint8Array(4);
  head.forEach((n, i) => (bytes[i] = n));
  for (let i = 0; i < tailBytes; i++) bytes[3 - i] = Math.floor(last / 2 ** (8 * i)) % 256;
  return { bytes };
}

export function parseIPv6(text: string): Address | null {
  const plain = text.replace(/%.*$/, "");
  if (isIP(plain) !== 6) return null;
  const groups: number[] = [];
  const halves = plain.split("::");
  const read = (half: string): number[] => {
    if (half === "") return [];
    return half.split(":").flatMap((g) => {
      if (!g.includes(".")) return [parseInt(g, 16)];
      const v4 = parseIPv4(g)!.bytes; // node:net validated it as a dotted quad
      return [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    });
  };
  const head = read(halves[0]!);
  const tail = halves.length === 2 ? read(halves[1]!) : [];
  groups.push(...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail);
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    bytes[2 * i] = g >> 8;
    bytes[2 * i + 1] = g & 0xff;
  });
  return { bytes };
}

/** Any IPv4 or IPv6 spelling (brackets and zone ids removed by the caller), else null. */
export function parseAddress(text: string): Address | null {
  return text.includes(":") ? parseIPv6(text) : parseIPv4(text);
}

export function formatAddress(address: Address): string {
  const b = address.bytes;
  if (b.length === 4) return Array.from(b).join(".");
  const groups = Array.from({ length: 8 }, (_, i) => ((b[2 * i]! << 8) | b[2 * i + 1]!).toString(16));
  // Shorten the longest run of zero groups (RFC 5952).
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  if (best.start < 0) return groups.join(":");
  return `${groups.slice(0, best.start).join(":")}::${groups.slice(best.start + best.length).join(":")}`;
}

const startsWith = (bytes: Uint8Array, prefix: number[]) => prefix.every((v, i) => bytes[i] === v);
const ZERO_80 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/**
 * The IPv4 address an IPv6 one carries and reaches: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
 * (::a.b.c.d, deprecated but still routed by some stacks) and NAT64 (64:ff9b::a.b.c.d).
 */
export function embeddedIPv4(address: Address): Address | null {
  const b = address.bytes;
  if (b.length !== 16) return null;
  const tail = { bytes: b.slice(12) };
  if (startsWith(b, [...ZERO_80, 0xff, 0xff])) return tail;
  if (startsWith(b, [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return tail;
  if (startsWith(b, [...ZERO_80, 0, 0]) && (b[12]! | b[13]!) !== 0) return tail; // not :: or ::1
  return null;
}

/**
 * Every IPv4 address an IPv6 one embeds, so that a guard on an IPv4 range closes all its IPv6
 * spellings: the forms above, plus those a translator, a relay or the host's own tunnel may turn
 * back into IPv4 traffic — IPv4-translated (::ffff:0:a.b.c.d, RFC 2765), 6to4 (2002:WWXX:YYZZ::/48,
 * RFC 3056), Teredo (2001:0::/32, RFC 4380: server address in bits 32-63, client address in the
 * last 32 bits, inverted) and ISATAP (interface id 0:5efe:a.b.c.d or 200:5efe:…, RFC 5214).
 */
export function embeddedIPv4s(address: Address): Address[] {
  const b = address.bytes;
  if (b.length !== 16) return [];
  const plain = embeddedIPv4(address);
  if (plain) return [plain];
  const tail = { bytes: b.slice(12) };
  if (startsWith(b, [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0])) return [tail];
  if (startsWith(b, [0x20, 0x02])) return [{ bytes: b.slice(2, 6) }];
  if (startsWith(b, [0x20, 0x01, 0x00, 0x00])) return [{ bytes: b.slice(4, 8) }, { bytes: b.slice(12).map((x) => x ^ 0xff) }];
  if ((b[8] === 0x00 || b[8] === 0x02) && b[9] === 0x00 && b[10] === 0x5e && b[11] === 0xfe) return [tail];
  return [];
}

export function parseCidr(text: string): Cidr | null {
  const [addressText, prefixText, extra] = text.split("/");
  if (addressText === undefined || extra !== undefined) return null;
  const address = parseAddress(addressText);
  if (!address) return null;
  const max = address.bytes.length * 8;
  if (prefixText === undefined) return { address, prefix: max };
  if (!/^[0-9]{1,3}$/.test(prefixText) || Number(prefixText) > max) return null;
  return { address, prefix: Number(prefixText) };
}

/** Same family only: a mapped IPv6 address is matched through its IPv4 form by the caller. */
export function cidrContains(cidr: Cidr, address: Address): boolean {
  const a = cidr.address.bytes;
  const b = address.bytes;
  if (a.length !== b.length) return false;
  const full = Math.floor(cidr.prefix / 8);
  for (let i = 0; i < full; i++) if (a[i] !== b[i]) return false;
  const rest = cidr.prefix % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (a[full]! & mask) === (b[full]! & mask);
}
