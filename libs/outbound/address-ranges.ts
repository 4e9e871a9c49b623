import { isIPv4, isIPv6 } from 'node:net';

/** Why an address may not be the target of an outbound call, or null when it is a public unicast address. */
export type AddressRefusal =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'shared (CGNAT)'
  | 'multicast'
  | 'broadcast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'unique-local'
  | 'site-local'
  | 'teredo'
  | 'discard'
  | 'not an IP address';

interface Range {
  base: bigint;
  bits: number;
  reason: AddressRefusal;
}

// IPv4 ranges that never name an internet host (IANA special-purpose registry).
const ipv4Ranges: Range[] = [
  v4('0.0.0.0', 8, 'unspecified'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'shared (CGNAT)'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'reserved'),
  v4('192.0.2.0', 24, 'documentation'),
  v4('192.88.99.0', 24, 'reserved'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'benchmarking'),
  v4('198.51.100.0', 24, 'documentation'),
  v4('203.0.113.0', 24, 'documentation'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('255.255.255.255', 32, 'broadcast'),
  v4('240.0.0.0', 4, 'reserved'),
];

// IPv6 ranges that never name an internet host; forms embedding an IPv4 address are handled separately.
const ipv6Ranges: Range[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  v6('100::', 64, 'discard'),
  v6('2001::', 32, 'teredo'),
  v6('2001:db8::', 32, 'documentation'),
  v6('fc00::', 7, 'unique-local'),
  v6('fe80::', 10, 'link-local'),
  v6('fec0::', 10, 'site-local'),
  v6('ff00::', 8, 'multicast'),
];

// IPv6 forms that carry an IPv4 address: the embedded address decides (a NAT64 gateway or relay would reach it).
const embeddingForms: { base: bigint; bits: number; extract: (a: bigint) => bigint }[] = [
  { base: v6('::ffff:0:0', 96, 'reserved').base, bits: 96, extract: (a) => a & 0xffffffffn }, // IPv4-mapped
  { base: 0n, bits: 96, extract: (a) => a & 0xffffffffn }, // IPv4-compatible (deprecated)
  { base: v6('64:ff9b::', 96, 'reserved').base, bits: 96, extract: (a) => a & 0xffffffffn }, // NAT64 well-known
  { base: v6('64:ff9b:1::', 48, 'reserved').base, bits: 48, extract: (a) => a & 0xffffffffn }, // NAT64 local-use
  { base: v6('2002::', 16, 'reserved').base, bits: 16, extract: (a) => (a >> 80n) & 0xffffffffn }, // 6to4
];

/** Classifies an IP literal: null for a public unicast address, else the reason it is refused. */
export function refusalOf(address: string): AddressRefusal | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(bare)) return refusalOfIPv4(parseIPv4(bare));
  if (isIPv6(bare)) return refusalOfIPv6(parseIPv6(bare));
  return 'not an IP address';
}

function refusalOfIPv4(value: bigint): AddressRefusal | null {
  return ipv4Ranges.find((r) => inRange(value, r.base, r.bits, 32))?.reason ?? null;
}

function refusalOfIPv6(value: bigint): AddressRefusal | null {
  if (value === 0n) return 'unspecified';
  if (value === 1n) return 'loopback';
  for (const form of embeddingForms) {
    if (inRange(value, form.base, form.bits, 128)) return refusalOfIPv4(form.extract(value));
  }
  return ipv6Ranges.find((r) => inRange(value, r.base, r.bits, 128))?.reason ?? null;
}

function inRange(value: bigint, base: bigint, bits: number, width: number): boolean {
  const shift = BigInt(width - bits);
  return value >> shift === base >> shift;
}

function v4(address: string, bits: number, reason: AddressRefusal): Range {
  return { base: parseIPv4(address), bits, reason };
}

function v6(address: string, bits: number, reason: AddressRefusal): Range {
  return { base: parseIPv6(address), bits, reason };
}

function parseIPv4(address: string): bigint {
  return address.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

/** Parses any valid IPv6 text form (with :: and a dotted IPv4 tail) into a 128-bit integer. */
function parseIPv6(address: string): bigint {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4value = parseIPv4(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${(v4value >> 16n).toString(16)}:${(v4value & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array(missing).fill('0'), ...tailGroups];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group || '0', 16)), 0n);
}
