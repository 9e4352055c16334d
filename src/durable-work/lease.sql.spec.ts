import { describe, expect, it } from 'vitest';
import { CLAIM_LOCK_CLASSID, claimLockSql } from './lease.sql';

describe(claimLockSql.name, () => {
  it("locks the queue's key in the claim lock space; only plain queue names", () => {
    expect(claimLockSql('webhook_deliveries')).toBe(
      `SELECT pg_advisory_xact_lock(${CLAIM_LOCK_CLASSID}, hashtext('webhook_deliveries'))`,
    );
    expect(() => claimLockSql("x'); DROP TABLE t; --")).toThrow(/identifier/);
  });
});
