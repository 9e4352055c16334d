import type { FastifyReply } from 'fastify';
import type { ReadAnswer } from './listings.service';

/**
 * If-None-Match against a strong ETag (RFC 9110 13.1.2: weak comparison, so `W/"x"` matches `"x"`;
 * `*` matches any current representation).
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

/**
 * Sends a read answer: the exact body with its strong ETag and Cache-Control, or 304 Not Modified (no
 * body, same validators) when the client already holds it.
 */
export function sendAnswer(reply: FastifyReply, ifNoneMatch: string | undefined, answer: ReadAnswer): void {
  void reply.header('etag', answer.etag);
  void reply.header(
    'cache-control',
    answer.maxAgeSeconds > 0 ? `private, max-age=${answer.maxAgeSeconds}` : 'private, no-cache',
  );
  if (noneMatch(ifNoneMatch, answer.etag)) {
    void reply.code(304).send();
    return;
  }
  void reply.code(200).type('application/json; charset=utf-8').send(answer.body);
}
