import pino, { type DestinationStream, type Logger } from 'pino';
import type { AppConfig } from '../config/app.config';

/**
 * Paths pino blanks out wherever they appear in a log object. Request lines are built by hand and
 * never include headers; these paths are the second line of defence for anything logged ad hoc.
 */
export const BUILT_IN_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  '*.headers.cookie',
  'authorization',
  'apiKey',
  'password',
  'secret',
  'token',
  'claimUrl',
  'signedTransaction',
  '*.authorization',
  '*.apiKey',
  '*.api_key',
  '*.password',
  '*.secret',
  '*.token',
  '*.claimUrl',
  '*.claim_url',
  '*.signedTransaction',
];

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
