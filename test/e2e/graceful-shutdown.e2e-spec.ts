import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startTestApp } from '../support/test-app';
import { dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';

describe('graceful shutdown (e2e)', () => {
  it('a request in flight when shutdown starts still completes, its upstream call included', async () => {
    const t = await startTestApp({ UPSTREAM_KEY_CHECK_TTL_MS: '0', HEALTH_CHECK_TIMEOUT_MS: '5000' });
    try {
      await t.app.listen(0, '127.0.0.1');
      const url = await t.app.getUrl();
      // The readiness key check waits ~1 s at the upstream: shutdown starts in the middle of it.
      t.sandbox.admin.addFault({ operation: 'events', kind: 'latency', latencyMs: 1000, times: 1 });
      const pending = fetch(`${url}/health/ready`);
      // A one-shot rule leaves the sandbox's list as soon as a call picks it up, before the delay starts: an
      // empty list means the upstream call is in flight, so close() begins mid-call however slow the machine is
      // (a fixed sleep could close before the request even reached its upstream call).
      await waitUntil(() => t.sandbox.admin.faults().length === 0, 10_000, 10);
      const closing = t.app.close();
      const res = await pending;
      // Readiness turns 503 once shutdown begins (so balancers drain), but the answer is delivered and the
      // upstream call behind it completed: the client's connection was not torn down under it.
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
        'Not ready: shutting down',
      );
      const attempts = t.logs.records().filter((r) => r.msg === 'upstream attempt');
      expect(attempts.length).toBeGreaterThan(0);
      // One attempt, answered: no socket destroyed mid-call (status "network") and no retry.
      expect(attempts.map((r) => r.upstream)).toEqual([
        expect.objectContaining({ attempt: 1, status: '200' }),
      ]);
      expect(t.logs.text).not.toContain('"status":"network"');
      await closing;
      // Once closed, nothing is accepted any more.
      await expect(fetch(`${url}/health/live`)).rejects.toThrow(/fetch failed/);
      expect(t.logs.text).not.toContain('unhandled error');
    } finally {
      await t.sandbox.close();
      await dropDatabase(inject('databaseAdminUrl'), t.databaseUrl);
    }
  });
});
