import { UpstreamError, type UpstreamOperation } from '../upstream.error';
import type { Page, WalkPage } from '../upstream.types';

export const DEFAULT_MAX_PAGES = 100_000;

function loopError(operation: UpstreamOperation, message: string): UpstreamError {
  return new UpstreamError({ code: 'BAD_RESPONSE', operation, message, attempts: 0 });
}

/**
 * The contract's pagination procedure (4.8): first page without a cursor, then `next_cursor` passed back
 * unchanged with the same filters (the caller's `fetchPage` closes over them), through empty pages, until
 * `next_cursor` is null. Loops are refused with BAD_RESPONSE: any `next_cursor` already used in this walk,
 * its own included (empty page or not: the contract gives a repeated cursor no "ask again" meaning, and
 * asking again at once could only repeat the answer), or more than `maxPages` pages.
 */
export async function* walkPages<T>(
  operation: UpstreamOperation,
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  maxPages: number = DEFAULT_MAX_PAGES,
): AsyncGenerator<WalkPage<T>, void, undefined> {
  const seen = new Set<string>();
  let cursor: string | undefined;
  let itemsSoFar = 0;
  for (let page = 1; ; page++) {
    if (page > maxPages)
      throw loopError(operation, `walk exceeded ${maxPages} pages without a null next_cursor`);
    const result = await fetchPage(cursor);
    itemsSoFar += result.items.length;
    const next = result.nextCursor;
    yield { page, items: result.items, itemsOnPage: result.items.length, itemsSoFar, nextCursor: next };
    if (next === null) return;
    if (seen.has(next)) {
      const which = next === cursor ? ' (the cursor it was asked with)' : '';
      throw loopError(
        operation,
        `page ${page} returned a next_cursor already used in this walk${which}; stopping instead of looping`,
      );
    }
    seen.add(next);
    cursor = next;
  }
}
