import { describe, expect, it } from 'vitest';
import { leaseName } from './sync-lease';

describe(leaseName.name, () => {
  it('one lease per full resource and one per event refresh', () => {
    expect(leaseName('events', null)).toBe('sync:events');
    expect(leaseName('listings', null)).toBe('sync:listings');
    expect(leaseName('event_listings', 18446744073709551615n)).toBe('sync:event:18446744073709551615');
  });
});
