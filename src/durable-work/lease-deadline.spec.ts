import { describe, expect, it } from 'vitest';
import { LEASE_DEADLINE_MARGIN_MAX_MS, leaseDeadline } from './lease-deadline';

describe(leaseDeadline.name, () => {
  it('the lease from when its statement was sent, less a tenth of it', () => {
    expect(leaseDeadline(1_000, 3_000)).toBe(3_700);
  });

  it('the margin is at most a second', () => {
    expect(leaseDeadline(1_000, 30_000)).toBe(1_000 + 30_000 - LEASE_DEADLINE_MARGIN_MAX_MS);
  });

  it('an unstamped claim (0: a plain read) has a deadline in the past', () => {
    expect(leaseDeadline(0, 30_000)).toBe(Number.NEGATIVE_INFINITY);
  });
});
