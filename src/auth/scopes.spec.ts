import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grants, parseScopeList, SCOPES } from './scopes';

describe('scopes', () => {
  it('a scope is granted by itself or by admin, never by any other combination', () => {
    fc.assert(
      fc.property(fc.subarray([...SCOPES]), fc.constantFrom(...SCOPES), (held, required) => {
        expect(grants(held, required)).toBe(held.includes(required) || held.includes('admin'));
      }),
    );
  });

  it('parses lists, dedupes, and rejects unknown or empty ones', () => {
    expect(parseScopeList('catalog:read, orders:write catalog:read')).toEqual([
      'catalog:read',
      'orders:write',
    ]);
    expect(() => parseScopeList('catalog:read,root')).toThrow(/root/);
    expect(() => parseScopeList(' , ')).toThrow(/at least one/);
  });
});
