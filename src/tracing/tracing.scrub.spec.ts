import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scrubAttributes, templateHttpPaths } from './tracing.scrub';

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

describe(templateHttpPaths.name, () => {
  it('an incoming request: the templated route in place of the path, after the origin in the full URL', () => {
    const sut = templateHttpPaths('server', {
      'http.route': '/v1/transactions/users/:subject',
      'http.target': '/v1/transactions/users/alice?x=1',
      'url.path': '/v1/transactions/users/alice',
      'http.url': 'http://127.0.0.1:3000/v1/transactions/users/alice?x=1',
      'http.method': 'GET',
    });
    expect(sut).toEqual({
      'http.route': '/v1/transactions/users/:subject',
      'http.target': '/v1/transactions/users/:subject',
      'url.path': '/v1/transactions/users/:subject',
      'http.url': 'http://127.0.0.1:3000/v1/transactions/users/:subject',
      'http.method': 'GET',
    });
  });

  it('an incoming request never routed: `unmatched`', () => {
    expect(templateHttpPaths('server', { 'http.target': '/secret/path' })).toEqual({
      'http.target': 'unmatched',
    });
  });

  it('an outgoing request: the origin only (no path, query or credentials)', () => {
    const sut = templateHttpPaths('client', {
      'http.url': 'https://user:pw@hooks.example.com:8443/hooks/tok_123?token=abc',
      'url.full': 'http://127.0.0.1:4010/wallets/users/alice/signatures',
      'http.target': '/hooks/tok_123?token=abc',
      'url.path': '/wallets/users/alice/signatures',
      'server.address': 'hooks.example.com',
    });
    expect(sut).toEqual({
      'http.url': 'https://hooks.example.com:8443',
      'url.full': 'http://127.0.0.1:4010',
      'server.address': 'hooks.example.com',
    });
  });

  it('a value that is not a URL is dropped, not kept', () => {
    expect(templateHttpPaths('client', { 'http.url': 'not a url' })).toEqual({});
  });
});
