import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from './app-error';
import { CURSOR_MAX_LENGTH, KeysetCursorCodec, type CursorBinding } from './keyset-cursor';

const SECRET = 's'.repeat(32);
const binding: CursorBinding = { sort: 'created_at_desc', filters: { owner: 'a', status: null } };

function refusal(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

const invalidCursor = expect.objectContaining({
  code: 'VALIDATION_FAILED',
  details: [{ field: 'cursor', problems: [expect.any(String)] }],
});

/** A cursor over an arbitrary JSON payload, MAC'd with the codec's own key (reaches into the class). */
function forgeSigned(codec: KeysetCursorCodec, value: unknown): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  const mac = (codec as unknown as { mac(p: string, b: CursorBinding): Buffer }).mac(payload, binding);
  return `${payload}.${mac.toString('base64url')}`;
}

describe(KeysetCursorCodec.name, () => {
  const sut = new KeysetCursorCodec(SECRET);

  it('decodes what it encoded, under the same binding', () => {
    const position = fc.array(fc.option(fc.string({ maxLength: 40 }), { nil: null }), { maxLength: 4 });
    fc.assert(
      fc.property(position, (values) => {
        expect(sut.decode(sut.encode(values, binding), binding)).toEqual(values);
      }),
    );
  });

  it('signs with HMAC-SHA256 over the canonical binding and the payload, for any secret length', () => {
    // The format cursors already issued carry: node's own HMAC is the oracle (keys shorter and longer
    // than SHA-256's 64-byte block, multi-byte characters included).
    const canonical = '["v1","created_at_desc",[["owner","a"],["status",null]]]';
    const secrets = fc.string({ minLength: 32, maxLength: 150, unit: 'grapheme' });
    const position = fc.array(fc.option(fc.string({ maxLength: 40 }), { nil: null }), { maxLength: 4 });
    fc.assert(
      fc.property(secrets, position, (secret, values) => {
        const [payload, mac] = new KeysetCursorCodec(secret).encode(values, binding).split('.');
        const expected = createHmac('sha256', secret).update(`${canonical}\n${payload}`).digest('base64url');
        expect(mac).toBe(expected);
      }),
    );
  });

  it('ignores filter order and absent (undefined) filters', () => {
    const cursor = sut.encode(['1'], binding);
    expect(
      sut.decode(cursor, { sort: binding.sort, filters: { status: null, x: undefined, owner: 'a' } }),
    ).toEqual(['1']);
  });

  it.each<[string, CursorBinding]>([
    ['another sort', { sort: 'created_at_asc', filters: binding.filters }],
    ['another filter value', { sort: binding.sort, filters: { owner: 'b', status: null } }],
    ['a filter dropped', { sort: binding.sort, filters: { owner: 'a' } }],
    ['a null filter given a value', { sort: binding.sort, filters: { owner: 'a', status: 'null' } }],
    ['a filter added', { sort: binding.sort, filters: { ...binding.filters, extra: '1' } }],
  ])('refuses a cursor issued for %s', (_name, other) => {
    const cursor = sut.encode(['1', 'id'], binding);
    expect(refusal(() => sut.decode(cursor, other))).toEqual(invalidCursor);
  });

  it('refuses a cursor signed with another secret', () => {
    const cursor = new KeysetCursorCodec('t'.repeat(32)).encode(['1'], binding);
    expect(refusal(() => sut.decode(cursor, binding))).toEqual(invalidCursor);
  });

  it('refuses any single-character change', () => {
    const cursor = sut.encode(['1700000000000', '00000000-0000-4000-8000-000000000000'], binding);
    fc.assert(
      fc.property(
        fc.nat({ max: cursor.length - 1 }),
        fc.constantFrom('A', 'b', 'Z', '9', '_', '-', '.', 'x'),
        (at, ch) => {
          fc.pre(cursor[at] !== ch);
          const tampered = cursor.slice(0, at) + ch + cursor.slice(at + 1);
          expect(refusal(() => sut.decode(tampered, binding))).toEqual(invalidCursor);
        },
      ),
    );
  });

  it.each([
    ['empty', ''],
    ['no MAC', Buffer.from('["1"]').toString('base64url')],
    ['the old unsigned format', Buffer.from('1.not-a-uuid').toString('base64url')],
    ['over-long', 'a'.repeat(CURSOR_MAX_LENGTH + 1)],
    ['non-base64url', '["1"].abc'],
  ])('refuses a malformed cursor (%s) with VALIDATION_FAILED naming cursor', (_name, cursor) => {
    const error = refusal(() => sut.decode(cursor, binding));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toEqual(invalidCursor);
  });

  it('refuses a validly signed payload that is not a position', () => {
    // Signed with the real secret, so only the shape check can refuse it.
    for (const value of [{ a: 1 }, [1], 'x', [['nested']]])
      expect(refusal(() => sut.decode(forgeSigned(sut, value), binding))).toEqual(invalidCursor);
  });

  it('refuses a short secret at construction', () => {
    expect(() => new KeysetCursorCodec('short')).toThrow(/at least 32/);
  });
});
