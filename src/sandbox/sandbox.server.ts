import Fastify, { type FastifyInstance } from 'fastify';
import { registerAdminRoutes } from './http/admin.routes';
import { registerApiRoutes } from './http/api.routes';
import { SandboxAdmin } from './sandbox.admin';
import { SandboxCore } from './sandbox.core';
import { installBodyParsers, MAX_BODY_BYTES, PendingWaits } from './http/io';
import { ADMIN_KEY_HEADER, resolveSandboxOptions, type SandboxOptions } from './sandbox.options';

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

/** Builds the sandbox (state, routes, parsers) without listening. */
export async function buildSandbox(options: SandboxOptions = {}): Promise<SandboxApp> {
  const resolved = resolveSandboxOptions(options);
  const core = new SandboxCore(resolved);
  const admin = new SandboxAdmin(core);
  const waits = new PendingWaits();
  const app = Fastify({
    // Keys and admin keys are never logged (contract 5.6).
    logger: resolved.logger
      ? {
          redact: [
            'req.headers["x-api-key"]',
            `req.headers["${ADMIN_KEY_HEADER}"]`,
            'req.headers.authorization',
          ],
        }
      : false,
    bodyLimit: MAX_BODY_BYTES,
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
