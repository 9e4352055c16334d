import pino, { type DestinationStream, type Logger } from 'pino';
import type { AppConfig } from '../config/app.config';

/** Field names that hold secrets wherever they appear: headers and the service's own secret fields. */
const SECRET_FIELDS = [
  'authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
  'apiKey',
  'api_key',
  'password',
  'secret',
  'token',
  'claimUrl',
  'claim_url',
  'signedTransaction',
];

/**
 * Paths pino blanks out in every log object: each secret field at the top level and up to two levels
 * down (`req.headers.authorization`, `upstream.apiKey`). Request lines are built by hand and never
 * include headers; these paths are the second line of defence for anything logged ad hoc.
 */
export const BUILT_IN_REDACT_PATHS = SECRET_FIELDS.flatMap((field) => {
  const key = `["${field}"]`;
  return [key, `*${key}`, `*.*${key}`];
});

/**
 * Errors from HTTP clients carry their request config (headers included); pino's default serializer
 * would log it. Keep only type, message, code and stack.
 */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: error.message,
    ...(code === undefined ? {} : { code }),
    stack: error.stack,
  };
}

export function createRootLogger(config: AppConfig, destination?: DestinationStream): Logger {
  return pino(
    {
      level: config.LOG_LEVEL,
      base: { service: 'ticket-resale-bff' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...BUILT_IN_REDACT_PATHS, ...config.LOG_REDACT_PATHS], censor: '[REDACTED]' },
      serializers: { err: serializeError, error: serializeError },
    },
    destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
