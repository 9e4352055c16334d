import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { helmetHeaders, installSecurityHeaders, SECURITY_HEADERS } from './security-headers';

describe(helmetHeaders.name, () => {
  it('computes what helmet sets with HELMET_OPTIONS: the bare answers’ table', async () => {
    await expect(helmetHeaders()).resolves.toEqual(SECURITY_HEADERS);
  });

  it("allows scripts only from this origin: no 'unsafe-inline' in script-src (issue 31 item 5)", async () => {
    const csp = (await helmetHeaders())['content-security-policy'];
    const scriptSrc = csp.split(';').find((d) => d.startsWith('script-src '));
    expect(scriptSrc).toBe("script-src 'self'");
  });

  it('follows the options (a changed CSP changes the table)', async () => {
    const headers = await helmetHeaders({
      contentSecurityPolicy: { directives: { defaultSrc: ["'none'"] } },
    });
    expect(headers['content-security-policy']).toMatch(/^default-src 'none';/);
  });
});

describe(installSecurityHeaders.name, () => {
  it('sets the headers on every answer, a route’s own header of the same name winning', async () => {
    const sut = Fastify({ logger: false });
    installSecurityHeaders(sut);
    sut.get('/a', () => ({ ok: true }));
    sut.get('/b', (_request, reply) => reply.header('x-frame-options', 'DENY').send('x'));
    const a = await sut.inject('/a');
    const b = await sut.inject('/b');
    const missing = await sut.inject('/nowhere');
    for (const answer of [a, missing]) {
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) expect(answer.headers[name]).toBe(value);
    }
    expect(b.headers['x-frame-options']).toBe('DENY');
    await sut.close();
  });
});
