import { describe, expect, it } from 'vitest';
import { KeysetCursorCodec, type CursorBinding } from './keyset-cursor';
import { keysetPage } from './keyset-page';

const codec = new KeysetCursorCodec('s'.repeat(32));
const binding: CursorBinding = { sort: 'id_asc', filters: {} };
const positionOf = (row: { id: number }): string[] => [String(row.id)];
const rows = (n: number): { id: number }[] => Array.from({ length: n }, (_, i) => ({ id: i + 1 }));

describe(keysetPage.name, () => {
  it.each([
    [0, 3, [], null],
    [2, 3, [1, 2], null],
    [3, 3, [1, 2, 3], null],
    [4, 3, [1, 2, 3], ['3']],
  ])('%s fetched rows, limit %s → items %j, cursor at %j', (fetched, limit, ids, position) => {
    const sut = keysetPage(rows(fetched), limit, positionOf, codec, binding);
    expect(sut.items.map((r) => r.id)).toEqual(ids);
    expect(sut.next_cursor === null ? null : codec.decode(sut.next_cursor, binding)).toEqual(position);
  });
});
