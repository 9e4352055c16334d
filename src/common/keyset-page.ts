import type { CursorBinding, CursorValue, KeysetCursorCodec } from './keyset-cursor';
import type { Page } from './dto/page.dto';

/**
 * One page from `limit + 1` rows fetched in keyset order: the first `limit` rows, and a cursor at
 * the last of them when the extra row shows that more follow (null otherwise).
 */
export function keysetPage<T>(
  rows: readonly T[],
  limit: number,
  positionOf: (row: T) => readonly CursorValue[],
  codec: KeysetCursorCodec,
  binding: CursorBinding,
): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const more = rows.length > limit && last !== undefined;
  return { items, next_cursor: more ? codec.encode(positionOf(last), binding) : null };
}
