import { describe, expect, it } from 'vitest';
import { ResponseCache } from './response-cache';

const body = (text: string) => ({ body: text, etag: `"${text}"` });

describe(ResponseCache.name, () => {
  it('finds an entry only under the state version it was rendered from', () => {
    const sut = new ResponseCache(1_000_000);
    sut.set('v1', 'k', body('a'));
    expect(sut.get('v1', 'k')).toMatchObject(body('a'));
    expect(sut.get('v2', 'k')).toBeUndefined();
  });

  it('drops every entry of an older version when a newer one is stored', () => {
    const sut = new ResponseCache(1_000_000);
    sut.set('v1', 'a', body('a'));
    sut.set('v1', 'b', body('b'));
    sut.set('v2', 'c', body('c'));
    expect(sut.size).toBe(1);
    expect(sut.get('v2', 'a')).toBeUndefined();
    expect(sut.get('v2', 'c')).toMatchObject(body('c'));
  });

  it('stays within its byte cap, evicting the least recently used first', () => {
    const text = 'x'.repeat(100);
    const entryBytes = 2 * (1 + text.length + text.length + 2) + 96;
    const sut = new ResponseCache(entryBytes * 3);
    sut.set('v', 'a', body(text));
    sut.set('v', 'b', body(text));
    sut.set('v', 'c', body(text));
    sut.get('v', 'a');
    sut.set('v', 'd', body(text));
    expect(sut.usedBytes).toBeLessThanOrEqual(entryBytes * 3);
    expect(sut.get('v', 'b')).toBeUndefined();
    expect(sut.get('v', 'a')).toBeDefined();
    expect(sut.get('v', 'd')).toBeDefined();
  });

  it('never stores an entry larger than the whole cap, and stores nothing when off', () => {
    const small = new ResponseCache(100);
    small.set('v', 'k', body('y'.repeat(1000)));
    expect(small.size).toBe(0);
    const off = new ResponseCache(0);
    off.set('v', 'k', body('a'));
    expect(off.get('v', 'k')).toBeUndefined();
    expect(off.enabled).toBe(false);
  });

  it('replacing a key keeps the byte count exact', () => {
    const sut = new ResponseCache(10_000);
    sut.set('v', 'k', body('a'.repeat(50)));
    const once = sut.usedBytes;
    sut.set('v', 'k', body('a'.repeat(50)));
    expect(sut.usedBytes).toBe(once);
  });
});
