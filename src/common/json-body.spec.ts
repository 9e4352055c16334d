import { describe, expect, it } from 'vitest';
import { jsonDepth, MAX_JSON_DEPTH } from './json-body';

describe(jsonDepth.name, () => {
  it.each([
    ['1', 0],
    ['"[[["', 0],
    ['[]', 1],
    ['{"a":[1,{"b":{}}]}', 4],
    ['[[],[[]],[]]', 3],
    ['{"a\\"[[":"\\\\"}', 1],
    ['{"s":"\\"{{{{"}', 1],
  ])('%s nests %i deep', (text, depth) => {
    expect(jsonDepth(text)).toBe(depth);
  });

  it('stops scanning once past the limit', () => {
    expect(jsonDepth('['.repeat(100_000), MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
  });

  it('agrees with JSON.parse nesting for bodies at the limit', () => {
    const atLimit = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH);
    expect(jsonDepth(atLimit, MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH);
    expect(jsonDepth(`[${atLimit}]`, MAX_JSON_DEPTH)).toBe(MAX_JSON_DEPTH + 1);
  });
});
