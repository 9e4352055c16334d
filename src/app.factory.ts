import helmet from '@fastify/helmet';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Logger as PinoNestLogger } from 'nestjs-pino';
import type { DestinationStream, Logger } from 'pino';
import { AppModule, type AppModuleOptions } from './app.module';
import { AllExceptionsFilter } from './common/all-exceptions.filter';
import { createRootLogger } from './common/logging';
import { setupOpenApi } from './common/openapi';
import { REQUEST_ID_HEADER, requestIdFrom } from './common/request-id';
import { createValidationPipe } from './common/validation';
import type { AppConfig } from './config/app.config';
import { loadAuthConfig, type AuthConfig } from './config/auth.config';
import { MetricsService } from './metrics/metrics.service';
import type { UpstreamOptions } from './upstream/upstream.options';

export interface CreateAppOptions {
  config: AppConfig;
  databaseUrl: string;
  /** Where JSON logs go (stdout by default); tests pass a capturing stream. */
  logDestination?: DestinationStream;
  /** Resolved upstream address and key plus tuning; its logger defaults to a child of the app's. */
  upstream: UpstreamOptions;
  /** Auth variables (main.ts: from the environment); default: AuthConfig defaults for NODE_ENV. */
  authConfig?: AuthConfig;
  /** Test fixtures only: extra modules mounted next to the real ones. */
  extraModules?: AppModuleOptions['extraModules'];
}

export interface CreatedApp {
  app: NestFastifyApplication;
  logger: Logger;
}

/** Identity the auth guard attaches to a request; logged on every request line (never the key). */
interface RequestIdentity {
  apiClient?: { id: string; name: string };
}

function installRequestHooks(fastify: FastifyInstance, logger: Logger, metrics: MetricsService): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    const durationMs = reply.elapsedTime;
    metrics.observeHttp(request.method, route, reply.statusCode, durationMs / 1000);
    const client = (request as FastifyRequest & RequestIdentity).apiClient;
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
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({
      config,
      databaseUrl: options.databaseUrl,
      logger,
      auth: options.authConfig ?? loadAuthConfig({ NODE_ENV: config.NODE_ENV }),
      extraModules: options.extraModules,
      upstream: {
        ...options.upstream,
        logger: options.upstream.logger ?? logger.child({ module: 'upstream' }),
      },
    }),
    adapter,
    { bufferLogs: true, abortOnError: false },
  );
  app.useLogger(app.get(PinoNestLogger));
  const filter = new AllExceptionsFilter(logger);
  app.useGlobalFilters(filter);
  app.useGlobalPipes(createValidationPipe());

  const fastify = app.getHttpAdapter().getInstance();
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
