import helmet, { type FastifyHelmetOptions } from '@fastify/helmet';
import Fastify, { type FastifyInstance } from 'fastify';

/** The options `@fastify/helmet` is registered with (app.factory.ts). */
export const HELMET_OPTIONS: FastifyHelmetOptions = {
  contentSecurityPolicy: {
    directives: {
      defaultSrc: ["'self'"],
      // Scripts only from this origin: the status page and /docs load theirs from files (no inline script).
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
    },
  },
};

/**
 * The headers helmet sets with HELMET_OPTIONS, for the few answers written before any Fastify hook runs
 * (malformed HTTP, timeouts, bad URLs). An e2e test (malformed-requests) compares them with a routed
 * answer's headers, so a helmet upgrade or option change that makes them drift fails there.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';" +
    "frame-ancestors 'self';img-src 'self' data:;object-src 'none';script-src 'self';" +
    "script-src-attr 'none';style-src 'self' 'unsafe-inline';upgrade-insecure-requests",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

/**
 * The headers helmet sets with `options`, computed by helmet itself (registered on a throwaway Fastify
 * instance, one injected request). The spec checks SECURITY_HEADERS against it, so the table the service
 * sends stays exactly what helmet would send for HELMET_OPTIONS, without @fastify/helmet rebuilding its
 * middleware (CSP parsing included) on every request or this probe running at startup.
 */
export async function helmetHeaders(
  options: FastifyHelmetOptions = HELMET_OPTIONS,
): Promise<Readonly<Record<string, string>>> {
  const probe = Fastify({ logger: false });
  try {
    await probe.register(helmet, options);
    // Inside the handler the raw response holds exactly what helmet's onRequest hook set.
    probe.get('/', (_request, reply) => reply.send(reply.raw.getHeaders()));
    const answer = await probe.inject({ method: 'GET', url: '/' });
    const headers = answer.json<Record<string, string | number | string[]>>();
    return Object.freeze(
      Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)])),
    );
  } finally {
    await probe.close();
  }
}

const HEADER_ENTRIES = Object.entries(SECURITY_HEADERS);

/** Every answer of `fastify` gets helmet's headers for HELMET_OPTIONS (the SECURITY_HEADERS table). */
export function installSecurityHeaders(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (_request, reply, done) => {
    const raw = reply.raw;
    for (const [name, value] of HEADER_ENTRIES) raw.setHeader(name, value);
    done();
  });
}
