import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyJsonText, copyText } from './pg-copy';

describe(copyJsonText.name, () => {
  it('escapes backslashes, tabs, newlines and carriage returns for COPY text format', () => {
    expect(copyJsonText('{"a":"x\\\\y"}')).toBe('{"a":"x\\\\\\\\y"}');
    expect(copyJsonText('{\n\t"a":\r1}')).toBe('{\\n\\t"a":\\r1}');
    expect(copyJsonText('{"a":"plain"}')).toBe('{"a":"plain"}');
  });

  it('gives the same text as copyText for any JSON text and any string', () => {
    const specials = fc.constantFrom('\\', '\t', '\n', '\r', '"', 'a', 'é', '\u2028');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.json(),
          fc.array(specials).map((chars) => chars.join('')),
          fc.string(),
        ),
        (text) => {
          expect(copyJsonText(text)).toBe(copyText(text));
        },
      ),
    );
  });
});
