import { UpstreamError, type UpstreamOperation } from './upstream.error';
import type { Page, WalkPage } from './upstream.types';

export const DEFAULT_MAX_PAGES = 100_000;
/** Consecutive empty pages that hand back the cursor they were asked with ("nothing yet, ask again"). */
export const MAX_STALLED_PAGES = 3;

function loopError(operation: UpstreamOperation, message: string): UpstreamError {
  return new UpstreamError({ code: 'BAD_RESPONSE', operation, message, attempts: 0 });
}

/**
 * The contract's pagination procedure (4.8): first page without a cursor, then `next_cursor` passed back
 * unchanged with the same filters (the caller's `fetchPage` closes over them), through empty pages, until
 * `next_cursor` is null. Loops are refused with BAD_RESPONSE: a cursor from earlier in the walk, a page with
 * items that hands back its own cursor (it would serve them again), more than MAX_STALLED_PAGES empty pages
 * in a row handing back their own cursor, or more than `maxPages` pages.
 */
export async function* walkPages<T>(
  operation: UpstreamOperation,
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  maxPages: number = DEFAULT_MAX_PAGES,
): AsyncGenerator<WalkPage<T>, void, undefined> {
  const seen = new Set<string>();
  let cursor: string | undefined;
  let itemsSoFar = 0;
  let stalled = 0;
  for (let page = 1; ; page++) {
    if (page > maxPages)
      throw loopError(operation, `walk exceeded ${maxPages} pages without a null next_cursor`);
    const result = await fetchPage(cursor);
    itemsSoFar += result.items.length;
    const next = result.nextCursor;
    yield { page, items: result.items, itemsOnPage: result.items.length, itemsSoFar, nextCursor: next };
    if (next === null) return;
    if (next === cursor) {
      if (result.items.length > 0) {
        throw loopError(
          operation,
          `page ${page} has items but returned its own cursor as next_cursor; stopping`,
        );
      }
      if (++stalled > MAX_STALLED_PAGES) {
        throw loopError(operation, `${stalled} empty pages in a row returned the same cursor; stopping`);
      }
      continue;
    }
    if (seen.has(next)) {
      throw loopError(
        operation,
        `page ${page} returned a next_cursor already used in this walk; stopping instead of looping`,
      );
    }
    stalled = 0;
    seen.add(next);
    cursor = next;
  }
}
