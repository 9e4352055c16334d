import { BlockList, isIP } from 'node:net';

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

/** An IPv4 address carried inside an IPv6 one (`::ffff:a.b.c.d` mapped, `64:ff9b::a.b.c.d` NAT64), else null. */
function embeddedIpv4(address: string): string | null {
  const lower = address.toLowerCase();
  for (const prefix of ['::ffff:', '64:ff9b::']) {
    if (!lower.startsWith(prefix)) continue;
    const rest = lower.slice(prefix.length);
    if (isIP(rest) === 4) return rest;
    // The hex form (`::ffff:a9fe:a9fe`) of the same address.
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest);
    if (hex) {
      const high = Number.parseInt(hex[1] ?? '0', 16);
      const low = Number.parseInt(hex[2] ?? '0', 16);
      return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
    }
  }
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

export class AddressPolicy {
  private readonly refused: BlockList[];

  constructor(readonly production: boolean) {
    this.refused = production ? [blockList(ALWAYS), blockList(PRODUCTION)] : [blockList(ALWAYS)];
  }

  /** Why `address` (an IP literal) may not be a webhook's destination; null when it may. */
  refusal(address: string): string | null {
    const bare = bareHost(address).replace(/%.*$/, '');
    const family = isIP(bare);
    if (family === 0) return `${address} is not an IP address`;
    const v4 = family === 6 ? embeddedIpv4(bare) : null;
    const [checked, type] = v4
      ? [v4, 'ipv4' as const]
      : [bare, family === 4 ? ('ipv4' as const) : ('ipv6' as const)];
    if (this.refused.some((list) => list.check(checked, type)))
      return this.production
        ? `${address} is a link-local, metadata, loopback, private or reserved address`
        : `${address} is a link-local, metadata or reserved address`;
    return null;
  }
}
