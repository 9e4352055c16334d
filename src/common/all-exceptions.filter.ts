import { ArgumentsHost, Catch, HttpException, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { AppError, codeForStatus, type ErrorCode } from './app-error';

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown; requestId: string };
}

interface Resolved {
  status: number;
  code: ErrorCode;
  message: string;
  details?: unknown;
  retryAfterSeconds?: number;
}

/** Fastify's own errors (body parsing, limits) carry a statusCode and an FST_ code. */
interface FrameworkError {
  statusCode?: number;
  code?: string;
  message?: string;
}

const SAFE_FRAMEWORK_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported content type; send application/json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Request body is empty but content-type is application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Content-Length does not match the body',
};

function httpExceptionMessage(exception: HttpException, status: number): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return status === 404 ? 'Not found' : exception.message;
}

/**
 * Retry-After (seconds) of a 503 that carries none of its own (a failed readiness check, a bare 503): every
 * 503 says when to come back; probes poll anyway.
 */
const UNAVAILABLE_RETRY_AFTER_S = 1;

interface HealthCheckBody {
  status: 'error' | 'shutting_down';
  error?: Record<string, unknown>;
  details: Record<string, unknown>;
}

/**
 * Terminus answers a failed readiness check with a 503 whose body says which dependency is down. Keep
 * that report (as `details`) and the 503: probes and operators need it, and it holds no secrets.
 */
function healthCheckFailure(exception: HttpException): Resolved | null {
  const body = exception.getResponse() as Partial<HealthCheckBody>;
  if (exception.getStatus() !== 503 || typeof body?.details !== 'object') return null;
  if (body.status === 'shutting_down') {
    // Terminus fails readiness once shutdown begins, so load balancers stop routing here.
    return {
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      message: 'Not ready: shutting down',
      details: body,
      retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S,
    };
  }
  if (body.status !== 'error') return null;
  const down = Object.keys(body.error ?? {});
  return {
    status: 503,
    code: 'SERVICE_UNAVAILABLE',
    message: `Not ready: ${down.length > 0 ? down.join(', ') : 'a dependency'} down`,
    details: body,
    retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S,
  };
}

/**
 * Turns an error of another module into an AppError, or `undefined` when it is not that module's error.
 * The composition root (app.factory.ts) hands the filter one per module whose errors may escape a feature
 * (the upstream client's `UpstreamError`), so `common/` knows no feature module: dependencies run one way.
 */
export type ErrorTranslator = (exception: unknown) => AppError | undefined;

export function resolveError(
  exception: unknown,
  request: FastifyRequest,
  translators: readonly ErrorTranslator[] = [],
): Resolved {
  for (const translate of translators) {
    const translated = translate(exception);
    if (translated) return resolveError(translated, request);
  }
  if (exception instanceof AppError) {
    return {
      status: exception.httpStatus,
      code: exception.code,
      message: exception.message,
      details: exception.details,
      retryAfterSeconds: exception.retryAfterSeconds,
    };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    if (status === 404 && !request.routeOptions?.url) {
      return {
        status,
        code: 'NOT_FOUND',
        // The path is not echoed: callers put ids and, by mistake, keys in paths.
        message: `No ${request.method} route matches this path`,
      };
    }
    const health = healthCheckFailure(exception);
    if (health) return health;
    if (status === 503) {
      return {
        status,
        code: 'SERVICE_UNAVAILABLE',
        message: 'Service temporarily unavailable',
        retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_S,
      };
    }
    if (status >= 500) return { status: 500, code: 'INTERNAL', message: 'Internal server error' };
    return { status, code: codeForStatus(status), message: httpExceptionMessage(exception, status) };
  }
  const framework = exception as FrameworkError;
  if (
    typeof framework?.statusCode === 'number' &&
    framework.statusCode >= 400 &&
    framework.statusCode < 500
  ) {
    const status = framework.statusCode;
    // JSON.parse messages quote the offending input, which may be a secret: never echo them.
    const message =
      (framework.code && SAFE_FRAMEWORK_MESSAGES[framework.code]) ??
      (status === 400 ? 'Request body is not valid JSON' : 'Bad request');
    return { status, code: codeForStatus(status), message };
  }
  return { status: 500, code: 'INTERNAL', message: 'Internal server error' };
}

/**
 * The one place that turns errors into HTTP. Every error body has the documented shape and the
 * request id; a 500 never carries a stack, SQL or driver text (those go to the log only).
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(
    private readonly logger: Logger,
    private readonly translators: readonly ErrorTranslator[] = [],
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    this.reply(exception, ctx.getRequest<FastifyRequest>(), ctx.getResponse<FastifyReply>());
  }

  reply(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const resolved = resolveError(exception, request, this.translators);
    // Only a real 500 is a bug worth a stack trace; 502-504 are dependency states, reported as such.
    if (resolved.code === 'INTERNAL') {
      this.logger.error({ err: exception, requestId: request.id }, 'unhandled error');
    } else if (!(exception instanceof AppError) && resolved.status >= 500) {
      // A translated module error (e.g. an UpstreamError no feature caught): worth a warning, no stack.
      // Name and code only: the message may quote a response excerpt.
      const { name, code } = exception as { name?: unknown; code?: unknown };
      this.logger.warn(
        { requestId: request.id, error: { name, code, details: resolved.details }, status: resolved.status },
        'module error answered by the global filter',
      );
    }
    const body: ErrorBody = {
      error: {
        code: resolved.code,
        message: resolved.message,
        ...(resolved.details === undefined ? {} : { details: resolved.details }),
        requestId: request.id,
      },
    };
    if (resolved.retryAfterSeconds !== undefined) {
      void reply.header('retry-after', String(Math.max(0, Math.ceil(resolved.retryAfterSeconds))));
    }
    void reply.status(resolved.status).header('content-type', 'application/json; charset=utf-8').send(body);
  }
}
