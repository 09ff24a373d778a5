import { BlockList, isIP } from 'node:net';

/**
 * Address ranges that reach this machine, its network or its cloud's metadata service
 * (169.254.169.254) rather than the internet. `http_request` connects to one only when the
 * operator lists that IP itself (see http-allowlist.ts): a host name, a `*.domain` or `*`
 * never opens them, since whoever controls a name's DNS chooses what it resolves to.
 */
const RANGES: readonly { kind: string; network: string; prefix: number; family: 4 | 6 }[] = [
  { kind: 'unspecified', network: '0.0.0.0', prefix: 8, family: 4 },
  { kind: 'loopback', network: '127.0.0.0', prefix: 8, family: 4 },
  { kind: 'link-local', network: '169.254.0.0', prefix: 16, family: 4 },
  { kind: 'private', network: '10.0.0.0', prefix: 8, family: 4 },
  { kind: 'private', network: '172.16.0.0', prefix: 12, family: 4 },
  { kind: 'private', network: '192.168.0.0', prefix: 16, family: 4 },
  { kind: 'shared (carrier-grade NAT)', network: '100.64.0.0', prefix: 10, family: 4 },
  // An IPv6 socket reaches the IPv4 address inside these two, loopback included.
  { kind: 'IPv4-mapped', network: '::ffff:0:0', prefix: 96, family: 6 },
  { kind: 'IPv4-compatible', network: '::', prefix: 96, family: 6 },
  { kind: 'unspecified', network: '::', prefix: 128, family: 6 },
  { kind: 'loopback', network: '::1', prefix: 128, family: 6 },
  { kind: 'link-local', network: 'fe80::', prefix: 10, family: 6 },
  { kind: 'site-local', network: 'fec0::', prefix: 10, family: 6 },
  { kind: 'unique-local', network: 'fc00::', prefix: 7, family: 6 },
];

/**
 * One BlockList per range, checked only for an address of the range's own family: a
 * BlockList also matches an IPv4 address against IPv6 rules through its mapped form.
 */
const CHECKS = RANGES.map((range) => {
  const list = new BlockList();
  list.addSubnet(range.network, range.prefix, range.family === 4 ? 'ipv4' : 'ipv6');
  return { ...range, list };
});

/** `loopback`, `private`, …, or undefined for an ordinary (public) address or text that is no IP. */
export function restrictedKind(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  // `::1` is also inside `::/96`; the narrower range names it better, so the longest prefix wins.
  let match: (typeof CHECKS)[number] | undefined;
  for (const check of CHECKS) {
    if (check.family !== family || !check.list.check(address, family === 4 ? 'ipv4' : 'ipv6')) continue;
    if (match === undefined || check.prefix > match.prefix) match = check;
  }
  return match?.kind;
}
