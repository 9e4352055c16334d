import { Logger } from '@nestjs/common';

/** The slice of pino's API the client uses; a pino Logger, nestjs-pino's PinoLogger or a test spy fits. */
export interface UpstreamLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Fallback when no logger is given: Nest's Logger, which the app routes to pino (nestjs-pino). */
export function nestUpstreamLogger(context = 'UpstreamClient'): UpstreamLogger {
  const logger = new Logger(context);
  return {
    info: (obj, msg) => logger.log({ msg, ...obj }),
    warn: (obj, msg) => logger.warn({ msg, ...obj }),
  };
}
