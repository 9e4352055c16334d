import { BlockList, isIP } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';

/** Refused everywhere: link-local (cloud metadata lives there), unspecified, multicast, reserved, metadata hosts. */
const ALWAYS: readonly [string, number, 'ipv4' | 'ipv6'][] = [
  ['0.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['100.100.100.200', 32, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
  ['fd00:ec2::254', 128, 'ipv6'],
];

/** Refused in production as well: loopback and private networks (the service's own neighbourhood). */
const PRODUCTION: readonly [string, number, 'ipv4' | 'ipv6'][] = [
  ['127.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
];

function blockList(ranges: readonly [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const list = new BlockList();
  for (const [network, prefix, family] of ranges) list.addSubnet(network, prefix, family);
  return list;
}

/**
 * IPv6 in production: only global unicast (2000::/3), less what in it is not a destination on the internet
 * (documentation, benchmarking, ORCHID, Teredo, the local-use NAT64 prefix). Site-local (fec0::/10), unique local,
 * link-local, multicast and the rest of the space are outside 2000::/3 and refused by that alone.
 */
const GLOBAL_V6 = blockList([['2000::', 3, 'ipv6']]);
const NOT_GLOBAL_V6 = blockList([
  ['2001::', 32, 'ipv6'],
  ['2001:2::', 48, 'ipv6'],
  ['2001:10::', 28, 'ipv6'],
  ['2001:20::', 28, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['3fff::', 20, 'ipv6'],
]);

const hexGroups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));

/** The eight 16-bit groups of an IPv6 literal (a trailing dotted IPv4 counts as two), else null. */
export function ipv6Groups(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = hexGroups(head);
  const right = tail === undefined ? [] : hexGroups(tail);
  const zeros = tail === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array<number>(zeros).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : null;
}

const v4Of = (bytes: number[]): string => bytes.map((b) => b & 255).join('.');

/**
 * The IPv4 address an IPv6 one carries and is delivered to, else null: IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-compatible `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96` and the local-use
 * `64:ff9b:1::/48` (RFC 8215, the /48 layout of RFC 6052), 6to4 `2002:AABB:CCDD::/48`. Hex and dotted forms alike.
 */
export function embeddedIpv4(groups: number[]): string | null {
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups as [number, number, number, number, number, number];
  const low = [g6 >> 8, g6, g7 >> 8, g7];
  const zeroTo = (n: number): boolean => groups.slice(0, n).every((g) => g === 0);
  if (zeroTo(5) && g5 === 0xffff) return v4Of(low);
  if (zeroTo(6) && g6 !== 0) return v4Of(low);
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return v4Of(low);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return v4Of(low);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return v4Of([g3 >> 8, g3, g4, g5 >> 8]);
  if (g0 === 0x2002) return v4Of([g1 >> 8, g1, g2 >> 8, g2]);
  return null;
}

/**
 * Which addresses a webhook may be sent to (the SSRF guard, docs/webhooks.md): never link-local (169.254/16,
 * fe80::/10, so never a cloud metadata service), unspecified, multicast or reserved; in production never
 * loopback or private either. Checked on every address a host resolves to, at every send, and on the address
 * the connection then uses (WebhookSender pins it), so a DNS answer that changes after registration (rebinding)
 * is caught.
 */
/** A URL's hostname without the brackets of an IPv6 literal (`[::1]` → `::1`); other names unchanged. */
export function bareHost(host: string): string {
  return host.replace(/^\[|\]$/g, '');
}

/** Injection token of whether production rules apply (WebhooksConfig.production). */
export const WEBHOOKS_PRODUCTION = 'WEBHOOKS_PRODUCTION';

@Injectable()
export class AddressPolicy {
  private readonly refused: BlockList[];

  constructor(@Inject(WEBHOOKS_PRODUCTION) readonly production: boolean) {
    this.refused = production ? [blockList(ALWAYS), blockList(PRODUCTION)] : [blockList(ALWAYS)];
  }

  /**
   * Why `address` (an IP literal) may not be a webhook's destination; null when it may. An IPv6 address that carries
   * an IPv4 one is judged by the IPv4 one; in production any other IPv6 address must be global unicast.
   */
  refusal(address: string): string | null {
    const bare = bareHost(address).replace(/%.*$/, '');
    const family = isIP(bare);
    if (family === 0) return `${address} is not an IP address`;
    const groups = family === 6 ? ipv6Groups(bare) : null;
    const v4 = groups ? embeddedIpv4(groups) : null;
    const [checked, type] = v4
      ? [v4, 'ipv4' as const]
      : [bare, family === 4 ? ('ipv4' as const) : ('ipv6' as const)];
    const notGlobal =
      this.production &&
      type === 'ipv6' &&
      (!GLOBAL_V6.check(checked, type) || NOT_GLOBAL_V6.check(checked, type));
    if (notGlobal || this.refused.some((list) => list.check(checked, type)))
      return this.production
        ? `${address} is a link-local, metadata, loopback, private or reserved address`
        : `${address} is a link-local, metadata or reserved address`;
    return null;
  }
}
