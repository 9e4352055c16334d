import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scrubAttributes } from './tracing.scrub';

describe(scrubAttributes.name, () => {
  it('drops captured headers, the user agent, query strings on their own, bodies and bound SQL values', () => {
    const sut = scrubAttributes({
      'http.request.header.x-api-key': ['k'],
      'http.response.header.set-cookie': ['c'],
      'http.user_agent': 'agent',
      'user_agent.original': 'agent',
      'url.query': 'idempotency-key=abc',
      'http.request.body': '{}',
      'db.query.parameter.0': 'v',
      'db.postgresql.values': ['v'],
      'order.id': 'o-1',
      'upstream.attempts': 2,
      'upstream.outcome_unknown': false,
    });
    expect(sut).toEqual({ 'order.id': 'o-1', 'upstream.attempts': 2, 'upstream.outcome_unknown': false });
  });

  it('keeps URLs and paths without query string, fragment or credentials', () => {
    const sut = scrubAttributes({
      'url.full': 'http://user:pw@127.0.0.1:4010/claim_wallets/purchase-status?idempotency-key=k#f',
      'http.target': '/v1/events?q=secret',
      'url.path': '/v1/orders',
      'http.route': '/v1/orders/:id',
    });
    expect(sut).toEqual({
      'url.full': 'http://127.0.0.1:4010/claim_wallets/purchase-status',
      'http.target': '/v1/events',
      'url.path': '/v1/orders',
      'http.route': '/v1/orders/:id',
    });
  });

  it('replaces every string literal of SQL text, keeping the statement and its placeholders', () => {
    const sut = scrubAttributes({
      'db.query.text': "EXECUTE orders_create('o-1', 'it''s-a-key', 42); SELECT $1 WHERE s = 'running'",
      'db.statement': "SELECT 'x'",
    });
    expect(sut).toEqual({
      'db.query.text': "EXECUTE orders_create('?', '?', 42); SELECT $1 WHERE s = '?'",
      'db.statement': "SELECT '?'",
    });
  });

  it('never exports a secret put in a query string or an SQL literal', () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9_-]{8,40}$/);
    fc.assert(
      fc.property(secret, fc.constantFrom('url.full', 'http.url', 'http.target'), (s, key) => {
        const value = key === 'http.target' ? `/p?k=${s}` : `https://h.example/p?a=1&k=${s}`;
        const sql = `EXECUTE x('${s.replaceAll("'", "''")}')`;
        expect(JSON.stringify(scrubAttributes({ [key]: value, 'db.query.text': sql }))).not.toContain(s);
      }),
    );
  });
});
