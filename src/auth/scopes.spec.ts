import { describe, expect, it } from 'vitest';
import { grants, parseScopeList, SCOPES, type Scope } from './scopes';

describe(grants.name, () => {
  // Written out by hand: `admin` implies every scope; nothing else implies anything but itself.
  it.each<[Scope[], Scope, boolean]>([
    [[], 'catalog:read', false],
    [[], 'admin', false],
    [['catalog:read'], 'catalog:read', true],
    [['catalog:read'], 'listings:write', false],
    [['catalog:read'], 'admin', false],
    [['listings:write', 'orders:write'], 'orders:write', true],
    [['listings:write', 'orders:write'], 'transactions:write', false],
    [['catalog:read', 'listings:write', 'orders:write', 'transactions:write'], 'admin', false],
    [['admin'], 'admin', true],
    [['admin'], 'catalog:read', true],
    [['admin'], 'listings:write', true],
    [['admin'], 'orders:write', true],
    [['admin'], 'transactions:write', true],
    [['admin'], 'webhooks:write', true],
    [['orders:write'], 'webhooks:write', false],
    [['admin'], 'watches:write', true],
    [['webhooks:write'], 'watches:write', false],
    [['orders:write', 'admin'], 'catalog:read', true],
  ])('held %j, required %s → %s', (held, required, expected) => {
    expect(grants(held, required)).toBe(expected);
  });

  it('the table above covers every scope as a requirement', () => {
    expect([...SCOPES].toSorted()).toEqual(
      [
        'admin',
        'catalog:read',
        'listings:write',
        'orders:write',
        'transactions:write',
        'webhooks:write',
        'watches:write',
      ].toSorted(),
    );
  });
});

describe(parseScopeList.name, () => {
  it.each<[string, Scope[]]>([
    ['catalog:read', ['catalog:read']],
    ['catalog:read, orders:write catalog:read', ['catalog:read', 'orders:write']],
    ['  admin\t,listings:write ', ['admin', 'listings:write']],
  ])('parses %j into %j', (text, expected) => {
    expect(parseScopeList(text)).toEqual(expected);
  });

  it.each([
    ['catalog:read,root', /root/],
    [' , ', /at least one/],
    ['', /at least one/],
    ['Catalog:Read', /Catalog:Read/],
  ])('refuses %j', (text, message) => {
    expect(() => parseScopeList(text)).toThrow(message);
  });
});
