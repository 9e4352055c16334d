import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import helmet from '@fastify/helmet';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import type { DestinationStream, Logger } from 'pino';
import { AppModule, type AppModuleOptions } from './app.module';
import { AllExceptionsFilter, type ErrorBody } from './common/all-exceptions.filter';
import { createRootLogger } from './common/logging';
import { setupOpenApi } from './common/openapi';
import { REQUEST_ID_HEADER, requestIdFrom } from './common/request-id';
import { createValidationPipe } from './common/validation';
import type { AppConfig } from './config/app.config';
import type { AuthConfig } from './config/auth.config';
import type { SyncConfig } from './config/sync.config';
import type { ListingsConfig } from './config/listings.config';
import { MetricsService } from './metrics/metrics.service';
import type { UpstreamOptions } from './upstream/upstream.options';

export interface CreateAppOptions {
  config: AppConfig;
  databaseUrl: string;
  /** Where JSON logs go (stdout by default); tests pass a capturing stream. */
  logDestination?: DestinationStream;
  /** Resolved upstream address and key plus tuning; its logger defaults to a child of the app's. */
  upstream: UpstreamOptions;
  authConfig: AuthConfig;
  /** Catalog sync settings (SYNC_*); defaults when omitted. */
  syncConfig?: SyncConfig;
  /** Read API settings (LISTINGS_*); defaults when omitted. */
  listingsConfig?: ListingsConfig;
  /** Test fixtures only: extra modules mounted next to the real ones. */
  extraModules?: AppModuleOptions['extraModules'];
}

export interface CreatedApp {
  app: NestFastifyApplication;
  logger: Logger;
}

function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const errorBody: ErrorBody = {
    error: {
      code: 'BAD_REQUEST',
      message: status === 431 ? 'Request headers are too large' : 'Malformed HTTP request',
      requestId: randomUUID(),
    },
  };
  const body = JSON.stringify(errorBody);
  socket.end(
    `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}

function installRequestHooks(fastify: FastifyInstance, logger: Logger, metrics: MetricsService): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  // Graceful shutdown: answers finished after close() began say `Connection: close`, or a client's
  // keep-alive socket would hold the server open until its keep-alive timeout (72 s).
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    const durationMs = reply.elapsedTime;
    metrics.observeHttp(request.method, route, reply.statusCode, durationMs / 1000);
    // Set by the auth guard (see auth/authenticated-request.ts); id and name only, never the key.
    const client = request.apiClient;
    logger.info(
      {
        requestId: request.id,
        method: request.method,
        route,
        status: reply.statusCode,
        durationMs: Math.round(durationMs * 100) / 100,
        ...(client ? { clientId: client.id, clientName: client.name } : {}),
      },
      'request completed',
    );
    done();
  });
}

/** Builds the whole service (used by main.ts and the e2e tests alike). Call `app.listen` after. */
export async function createApp(options: CreateAppOptions): Promise<CreatedApp> {
  const { config } = options;
  const logger = createRootLogger(config, options.logDestination);
  const adapter = new FastifyAdapter({
    logger: false,
    bodyLimit: config.BODY_LIMIT_BYTES,
    genReqId: requestIdFrom,
    trustProxy: false,
    return503OnClosing: true,
    // Requests too malformed to reach a route (bad header bytes…) still get the documented error shape.
    clientErrorHandler: answerClientError,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({
      config,
      databaseUrl: options.databaseUrl,
      logger,
      auth: options.authConfig,
      sync: options.syncConfig,
      listings: options.listingsConfig,
      extraModules: options.extraModules,
      upstream: {
        ...options.upstream,
        logger: options.upstream.logger ?? logger.child({ module: 'upstream' }),
      },
    }),
    adapter,
    // bodyParser: false keeps Nest from adding a form-urlencoded parser: the API speaks JSON only.
    { bufferLogs: true, abortOnError: false, bodyParser: false },
  );
  app.useLogger(app.get(PinoNestLogger));
  const filter = new AllExceptionsFilter(logger);
  app.useGlobalFilters(filter);
  app.useGlobalPipes(createValidationPipe());

  const fastify = app.getHttpAdapter().getInstance();
  // Fastify's own JSON parser stays (prototype-poisoning safe); any other body type is a 415.
  fastify.removeContentTypeParser('text/plain');
  installRequestHooks(fastify, logger, app.get(MetricsService));
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'", "'unsafe-inline'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
      },
    },
  });
  if (config.docsEnabled) setupOpenApi(app);
  await app.init();
  return { app, logger };
}
