import type { Server } from 'node:http';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import type { DestinationStream, Logger } from 'pino';
import type { Pool } from 'pg';
import { AppModule, type AppModuleOptions } from './app.module';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { AppError } from './common/app-error';
import {
  createClientErrorHandler,
  createFrameworkErrorHandler,
  MAX_PARAM_LENGTH,
  type BareAnswerSink,
} from './common/bare-answers';
import { installJsonBodyParser } from './common/json-body';
import { createRootLogger, installRequestLogContext } from './common/logging';
import { setupOpenApi } from './common/openapi';
import { REQUEST_ID_HEADER, requestIdFrom } from './common/request-id';
import { installSecurityHeaders } from './common/security-headers';
import { createValidationPipe } from './common/validation';
import type { AppConfig } from './config/app.config';
import type { AuthConfig } from './config/auth.config';
import type { CheckoutConfig } from './config/checkout.config';
import type { TransactionsConfig } from './config/transactions.config';
import type { SyncConfig } from './config/sync.config';
import type { ListingsConfig } from './config/listings.config';
import type { WebhooksConfig } from './config/webhooks.config';
import { DB_ACQUIRE_TIMEOUT_MS } from './database/data-source';
import { PG_POOL } from './database/database.module';
import { DATABASE_BUSY_RETRY_AFTER_S, installPoolGate, isDatabaseBusy } from './database/pool-gate';
import { DurableWorkService } from './durable-work/durable-work.service';
import { DrainState } from './health/drain.state';
import { MetricsService } from './metrics/metrics.service';
import { UpstreamError } from './upstream/upstream.error';
import { UNCAUGHT_UPSTREAM_OVERRIDES, upstreamToAppError } from './upstream/upstream-error.mapper';
import type { UpstreamOptions } from './upstream/upstream.options';
import { nameRequestSpan } from './tracing/tracing';

export interface CreateAppOptions {
  config: AppConfig;
  databaseUrl: string;
  /** Where JSON logs go (stdout by default); tests pass a capturing stream. */
  logDestination?: DestinationStream;
  /** Resolved upstream address and key plus tuning; its logger defaults to a child of the app's. */
  upstream: UpstreamOptions;
  authConfig: AuthConfig;
  transactionsConfig?: TransactionsConfig;
  /** Catalog sync settings (SYNC_*); defaults when omitted. */
  syncConfig?: SyncConfig;
  /** Checkout settings (CHECKOUT_*); defaults when omitted. */
  checkoutConfig?: CheckoutConfig;
  /** Read API settings (LISTINGS_*); defaults when omitted. */
  listingsConfig?: ListingsConfig;
  /** Webhooks settings (WEBHOOKS_*); defaults when omitted. */
  webhooksConfig?: WebhooksConfig;
  /** Test fixtures only: extra modules mounted next to the real ones. */
  extraModules?: AppModuleOptions['extraModules'];
}

/**
 * Begins the shutdown drain (docs/DEPLOY.md, main.ts on SIGTERM): readiness fails at once and every answer says
 * `Connection: close` (DrainState), and durable work claims nothing new — no worker pass, no wake-up — while the
 * work in progress goes on and the requests still served do their own work (a POST /v1/orders drives its order).
 * Here in the composition root: neither health nor durable work imports the other.
 */
export function beginDrain(app: INestApplicationContext): void {
  app.get(DrainState).begin();
  app.get(DurableWorkService).stopClaiming();
}

export interface CreatedApp {
  app: NestFastifyApplication;
  logger: Logger;
}

function installRequestHooks(
  fastify: FastifyInstance,
  logger: Logger,
  metrics: MetricsService,
  drain: DrainState,
): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    nameRequestSpan(request);
    done();
  });
  // Graceful shutdown (docs/DEPLOY.md): answers finished once draining began (SIGTERM's drain delay, or
  // close() itself) say `Connection: close`, so keep-alive clients and proxies reconnect to another replica
  // instead of sending their next request into a closing server, and no idle socket holds the server open
  // until its keep-alive timeout (72 s).
  fastify.addHook('preClose', (done) => {
    drain.begin();
    done();
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (drain.draining) void reply.header('connection', 'close');
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

/**
 * Requests Node would answer itself with an empty body (an `Expect:` it cannot meet: 417; HTTP/1.1
 * without `Host`: 400) go through Fastify instead and are refused here, after helmet's hook, so the
 * answer has the error shape, the headers, the log line and the metric like any other.
 */
function installProtocolChecks(fastify: FastifyInstance): void {
  const server: Server = fastify.server;
  // Without a listener Node writes a bare 417; with one, the request is ours to answer.
  server.on('checkExpectation', (req, res) => server.emit('request', req, res));
  fastify.addHook('onRequest', (request, _reply, done) => {
    const expect = request.headers.expect;
    if (expect !== undefined && expect.toLowerCase() !== '100-continue') {
      done(new AppError('EXPECTATION_FAILED', 'Only `Expect: 100-continue` is supported'));
      return;
    }
    if (request.raw.httpVersion === '1.1' && !request.headers.host) {
      done(new AppError('BAD_REQUEST', 'The Host header is required'));
      return;
    }
    done();
  });
}

/** Builds the whole service (used by main.ts and the e2e tests alike). Call `app.listen` after. */
export async function createApp(options: CreateAppOptions): Promise<CreatedApp> {
  const { config } = options;
  const logger = createRootLogger(config, options.logDestination);
  const bareAnswers: BareAnswerSink = { logger };
  const headersTimeout = Math.min(config.HTTP_HEADERS_TIMEOUT_MS, config.HTTP_REQUEST_TIMEOUT_MS);
  const adapter = new FastifyAdapter({
    logger: false,
    bodyLimit: config.BODY_LIMIT_BYTES,
    genReqId: requestIdFrom,
    trustProxy: false,
    return503OnClosing: true,
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout,
      // Node checks both timeouts on this interval (default 30 s, far coarser than the timeouts).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeout / 2))),
      // A missing Host is refused by our onRequest hook instead, in the error shape (Node's is empty).
      requireHostHeader: false,
    },
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Requests too malformed to reach a route (bad header bytes, timeouts…) still get the error shape.
    clientErrorHandler: createClientErrorHandler(bareAnswers),
    // So do URLs the router cannot decode (bad percent-escape) or over-long path parameters (414).
    frameworkErrors: createFrameworkErrorHandler(bareAnswers),
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({
      config,
      databaseUrl: options.databaseUrl,
      logger,
      auth: options.authConfig,
      transactions: options.transactionsConfig,
      sync: options.syncConfig,
      checkout: options.checkoutConfig,
      listings: options.listingsConfig,
      webhooks: options.webhooksConfig,
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
  const metrics = app.get(MetricsService);
  bareAnswers.metrics = metrics;
  // The filter learns the upstream client's error here, at the composition root: common/ imports no
  // feature module, and upstream/ already depends on common/ (AppError) for its mapper.
  const filter = new AllExceptionsFilter(logger, [
    (exception) =>
      exception instanceof UpstreamError
        ? upstreamToAppError(exception, UNCAUGHT_UPSTREAM_OVERRIDES)
        : undefined,
    // Pool acquire timeout or database overload anywhere: 503 with Retry-After, never a 500.
    (exception) =>
      isDatabaseBusy(exception)
        ? new AppError(
            'DATABASE_BUSY',
            'The service is busy; retry shortly',
            undefined,
            DATABASE_BUSY_RETRY_AFTER_S,
          )
        : undefined,
  ]);
  app.useGlobalFilters(filter);
  // Background work (checkout drives, workers) gets at most the pool minus a reserved share.
  installPoolGate(app.get<Pool>(PG_POOL), config.DB_POOL_SIZE, DB_ACQUIRE_TIMEOUT_MS);
  app.useGlobalPipes(createValidationPipe());

  const fastify = app.getHttpAdapter().getInstance();
  // Fastify's own JSON parser stays (prototype-poisoning safe) behind a nesting-depth check; any other
  // body type is a 415.
  fastify.removeContentTypeParser('text/plain');
  installJsonBodyParser(fastify);
  installRequestLogContext(fastify, logger);
  installRequestHooks(fastify, logger, metrics, app.get(DrainState));
  installSecurityHeaders(fastify);
  installProtocolChecks(fastify);
  if (config.docsEnabled) setupOpenApi(app);
  await app.init();
  return { app, logger };
}
