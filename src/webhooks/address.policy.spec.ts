import { describe, expect, it } from 'vitest';
import { AddressPolicy } from './address.policy';

describe(AddressPolicy.name, () => {
  const development = new AddressPolicy(false);
  const production = new AddressPolicy(true);

  it.each([
    '169.254.169.254',
    '169.254.0.1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '64:ff9b::169.254.169.254',
    'fe80::1',
    '[fe80::1]',
    'fe80::1%eth0',
    'fd00:ec2::254',
    '100.100.100.200',
    '0.0.0.0',
    '::',
    '224.0.0.1',
    'ff02::1',
    '255.255.255.255',
  ])('refuses %s everywhere (link-local, metadata, unspecified, multicast, reserved)', (address) => {
    expect(development.refusal(address)).toMatch(/link-local/);
    expect(production.refusal(address)).toMatch(/link-local/);
  });

  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '::1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    'fd12::1',
    '::ffff:10.0.0.1',
  ])('refuses loopback and private %s in production only', (address) => {
    expect(development.refusal(address)).toBeNull();
    expect(production.refusal(address)).toMatch(/private/);
  });

  it.each(['93.184.216.34', '2606:2800:220:1::1', '172.32.0.1', '169.255.0.1', '::ffff:93.184.216.34'])(
    'allows the public address %s',
    (address) => {
      expect(development.refusal(address)).toBeNull();
      expect(production.refusal(address)).toBeNull();
    },
  );

  it.each([
    '[::127.0.0.1]',
    '::7f00:1',
    '[::ffff:0:127.0.0.1]',
    '::ffff:0:7f00:1',
    '64:ff9b::10.0.0.1',
    '64:ff9b:1:7f00:0:100::',
    '64:ff9b:1:a00:0:100::',
    '2002:7f00:1::1',
    '2002:c0a8:101::',
    'fec0::1',
    'fc00::1',
    '2001:db8::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '100::1',
  ])(
    'refuses %s in production: IPv4 carried in IPv6 is judged as IPv4, other IPv6 must be global unicast',
    (address) => {
      expect(production.refusal(address)).toMatch(/private or reserved/);
    },
  );

  it.each(['64:ff9b:1:a9fe:a9:fe00::', '2002:a9fe:a9fe::1', '::a9fe:a9fe', '::ffff:0:169.254.169.254'])(
    'decodes the IPv4 in %s and refuses its link-local address everywhere',
    (address) => {
      expect(development.refusal(address)).toMatch(/link-local/);
      expect(production.refusal(address)).toMatch(/link-local/);
    },
  );

  it.each(['2002:5db8:d822::1', '64:ff9b::93.184.216.34', '64:ff9b:1:5db8:d8:2200::'])(
    'allows %s, whose embedded IPv4 address is public',
    (address) => {
      expect(production.refusal(address)).toBeNull();
    },
  );

  it('refuses what is not an IP address', () => {
    expect(production.refusal('example.com')).toMatch(/not an IP address/);
  });
});
