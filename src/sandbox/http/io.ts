import type { FastifyInstance, FastifyReply } from 'fastify';
import { JsonSyntaxError, parseRawJson } from './raw-json.parser';
import type { SandboxReply } from './reply';

/**
 * A body that could not be parsed. The parser never fails the request itself, so that authentication runs
 * first and a caller with a bad key gets 401 rather than a 400 that reveals the endpoint parsed its body.
 */
export class UnreadableBody {
  constructor(
    readonly status: 400 | 415,
    readonly message: string,
  ) {}
}

export const MAX_BODY_BYTES = 1_048_576;

export function installBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: MAX_BODY_BYTES },
    (_req, body, done) => {
      try {
        done(null, parseRawJson(body as string));
      } catch (error) {
        const message = error instanceof JsonSyntaxError ? error.message : 'body is not JSON';
        done(null, new UnreadableBody(400, `malformed JSON: ${message}`));
      }
    },
  );
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_BODY_BYTES }, (_req, _body, done) => {
    done(null, new UnreadableBody(415, 'request bodies must be application/json'));
  });
}

export function sendReply(reply: FastifyReply, result: SandboxReply): FastifyReply {
  reply.code(result.status);
  if (result.headers !== undefined) reply.headers(result.headers);
  if (result.kind === 'empty') return reply.send();
  if (result.kind === 'json' && result.sent !== undefined) reply.raw.once('finish', result.sent);
  const type = result.kind === 'json' ? 'application/json' : 'text/plain';
  return reply.type(`${type}; charset=utf-8`).send(result.body);
}

/** Drops the connection without a response (connection-reset and response-lost faults). */
export function dropConnection(reply: FastifyReply): void {
  reply.hijack();
  reply.raw.socket?.destroy();
}

/**
 * Real-time waits started by latency faults. close() releases them so a sandbox shuts down promptly and no
 * timer keeps the process alive.
 */
export class PendingWaits {
  private readonly waits = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  closed = false;

  delay(ms: number): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.waits.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      this.waits.add(entry);
    });
  }

  close(): void {
    this.closed = true;
    for (const entry of this.waits) {
      clearTimeout(entry.timer);
      entry.resolve();
    }
    this.waits.clear();
  }
}
