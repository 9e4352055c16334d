import Fastify, { type FastifyInstance } from 'fastify';
import { registerAdminRoutes } from './http/admin.routes';
import { registerApiRoutes } from './http/api.routes';
import { SandboxAdmin } from './sandbox.admin';
import { SandboxCore } from './sandbox.core';
import { installBodyParsers, MAX_BODY_BYTES, PendingWaits } from './http/io';
import { ADMIN_KEY_HEADER, resolveSandboxOptions, type SandboxOptions } from './sandbox.options';
import { redactUrl } from './http/log-redaction';

export interface SandboxApp {
  /** The Fastify instance, not listening; use app.inject() or app.listen(). */
  app: FastifyInstance;
  admin: SandboxAdmin;
  close(): Promise<void>;
}

export interface SandboxHandle {
  /** Base URL, e.g. http://127.0.0.1:4010 (no trailing slash). */
  url: string;
  admin: SandboxAdmin;
  close(): Promise<void>;
}

/** Error names for statuses Fastify itself produces (body limit, media type, internal failures). */
const ERROR_NAMES: Record<number, string> = {
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  500: 'internal_error',
};

/**
 * The request logger's options (SANDBOX_LOG=true). Keys and admin keys are never logged (contract 5.6): not in a
 * header, nor in a query string a careless client put one in.
 */
export function sandboxLogger() {
  return {
    redact: ['req.headers["x-api-key"]', `req.headers["${ADMIN_KEY_HEADER}"]`, 'req.headers.authorization'],
    serializers: {
      req: (request: { method: string; url: string; ip?: string }) => ({
        method: request.method,
        url: redactUrl(request.url),
        remoteAddress: request.ip,
      }),
    },
  };
}

/** Builds the sandbox (state, routes, parsers) without listening. */
export async function buildSandbox(options: SandboxOptions = {}): Promise<SandboxApp> {
  const resolved = resolveSandboxOptions(options);
  const core = new SandboxCore(resolved);
  const admin = new SandboxAdmin(core);
  const waits = new PendingWaits();
  const app = Fastify({
    logger: resolved.logger ? sandboxLogger() : false,
    bodyLimit: MAX_BODY_BYTES,
    // As strict as the service: a request (headers and body) that does not arrive whole in time gets 408.
    requestTimeout: resolved.requestTimeoutMs,
    http: {
      headersTimeout: resolved.requestTimeoutMs,
      // Node checks both timeouts on this interval (default 30 s, far coarser than the timeout).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(resolved.requestTimeoutMs / 2))),
    },
    // Destroys hung and keep-alive connections on close, so close() never waits on a "hang" fault.
    forceCloseConnections: true,
  });
  installBodyParsers(app);
  app.setNotFoundHandler((_request, reply) => reply.code(404).send());
  app.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
    const status =
      typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500
        ? error.statusCode
        : 500;
    return reply
      .code(status)
      .type('application/json; charset=utf-8')
      .send(
        JSON.stringify({
          error: ERROR_NAMES[status] ?? 'bad_request',
          message: 'request failed',
        }),
      );
  });
  registerApiRoutes(app, core, waits);
  registerAdminRoutes(app, admin);
  await app.ready();
  return {
    app,
    admin,
    close: async () => {
      waits.close();
      await app.close();
    },
  };
}

/** Builds and listens (host default 127.0.0.1, port default 4010, 0 = ephemeral). */
export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const sandbox = await buildSandbox(options);
  const host = options.host ?? '127.0.0.1';
  await sandbox.app.listen({ host, port: options.port ?? 4010 });
  const address = sandbox.app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return { url: `http://${urlHost}:${port}`, admin: sandbox.admin, close: () => sandbox.close() };
}
