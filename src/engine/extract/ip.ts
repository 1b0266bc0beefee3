/**
 * IP addresses as bucket values: canonical text for one address, and masked subnets
 * (`203.0.113.0/24`, `2001:db8:1200::/56`) so that one client cannot spread over many buckets by
 * rotating addresses inside its allocation. IPv4-mapped IPv6 (`::ffff:203.0.113.7`) counts as IPv4.
 */
import { isIPv4, isIPv6 } from "node:net";

/** A parsed address: 4 bytes (IPv4) or 16 bytes (IPv6). */
type Bytes = number[];

function parseV4(text: string): Bytes {
  return text.split(".").map(Number);
}

function parseV6(text: string): Bytes {
  let head = text;
  let tail: Bytes = [];
  const lastColon = text.lastIndexOf(":");
  if (text.includes(".")) {
    // Embedded IPv4 tail, e.g. ::ffff:203.0.113.7
    tail = parseV4(text.slice(lastColon + 1));
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [left = "", right] = head.split("::");
  const groups = (s: string) => (s === "" ? [] : s.split(":").map((g) => Number.parseInt(g, 16)));
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  const all = [...l, ...new Array<number>(8 - l.length - r.length).fill(0), ...r];
  const bytes = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

const isMappedV4 = (b: Bytes) => b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** Parse an address (zone index dropped); undefined when it is not an IP literal. */
function parse(text: string): Bytes | undefined {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const noZone = bare.split("%")[0] ?? bare;
  if (isIPv4(noZone)) return parseV4(noZone);
  if (!isIPv6(noZone)) return undefined;
  const v6 = parseV6(noZone);
  return isMappedV4(v6) ? v6.slice(12) : v6;
}

function formatV6(b: Bytes): string {
  const g: number[] = [];
  for (let i = 0; i < 16; i += 2) g.push(((b[i] ?? 0) << 8) | (b[i + 1] ?? 0));
  // RFC 5952: compress the longest run (>= 2) of zero groups, the first one on a tie.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = (xs: number[]) => xs.map((x) => x.toString(16)).join(":");
  return best < 0 ? hex(g) : `${hex(g.slice(0, best))}::${hex(g.slice(best + bestLen))}`;
}

const format = (b: Bytes) => (b.length === 4 ? b.join(".") : formatV6(b));

/** Canonical text of an address (`2001:db8::1`, mapped IPv4 as IPv4); undefined when not an IP. */
export function canonicalIp(text: string): string | undefined {
  const b = parse(text);
  return b === undefined ? undefined : format(b);
}

/** Prefix lengths of `maskedSubnet`. */
export interface SubnetPrefixes {
  readonly ipv4Prefix: number;
  readonly ipv6Prefix: number;
}

/** The subnet of an address as `network/prefix`; undefined when `text` is not an IP. */
export function maskedSubnet(text: string, prefixes: SubnetPrefixes): string | undefined {
  const b = parse(text);
  if (b === undefined) return undefined;
  const prefix = b.length === 4 ? prefixes.ipv4Prefix : prefixes.ipv6Prefix;
  const masked = b.map((byte, i) => {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    return byte & ((0xff << (8 - keep)) & 0xff);
  });
  return `${format(masked)}/${prefix}`;
}
