import type { FastifyInstance } from 'fastify';
import { AppError } from './app-error';

/**
 * Deepest JSON nesting (objects and arrays) a request body may have. The service's DTOs nest at most a
 * few levels; class-transformer and class-validator recurse per level, so ~1,500 levels overflowed the
 * stack (a 500) before this limit.
 */
export const MAX_JSON_DEPTH = 32;

const OPEN_OBJECT = 0x7b; // {
const CLOSE_OBJECT = 0x7d; // }
const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * Nesting depth of a JSON text, scanned once without parsing or recursion (brackets inside strings do
 * not count). Stops early, returning `limit + 1`, as soon as the depth passes `limit`. Malformed text
 * gets a number too; JSON.parse rejects it afterwards.
 */
export function jsonDepth(text: string, limit = Number.MAX_SAFE_INTEGER): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Replaces Fastify's JSON body parser with the same parser (prototype-poisoning safe, same body limit)
 * behind a depth check, so an over-deep body is a 400 in the error shape before any transformation.
 */
export function installJsonBodyParser(fastify: FastifyInstance, maxDepth = MAX_JSON_DEPTH): void {
  const parse = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (jsonDepth(text, maxDepth) > maxDepth) {
      done(new AppError('BAD_REQUEST', `Request body nests deeper than ${maxDepth} levels`), undefined);
      return;
    }
    void parse(request, text, done);
  });
}
