import { describe, expect, it } from 'vitest';
import { noneMatch } from './conditional-get';

describe('noneMatch (If-None-Match)', () => {
  const etag = '"abc"';
  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['"x", "abc"', true],
    [' "x" ,W/"abc" ', true],
    ['*', true],
    ['"abd"', false],
    ['abc', false],
    ['', false],
  ])('%j → %s', (header, expected) => {
    expect(noneMatch(header, etag)).toBe(expected);
  });

  it('is false without the header', () => {
    expect(noneMatch(undefined, etag)).toBe(false);
  });
});
