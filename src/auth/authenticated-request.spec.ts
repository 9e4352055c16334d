import { describe, expect, it } from 'vitest';
import { presentedKey, repeatsCredentialHeader } from './authenticated-request';

describe(presentedKey.name, () => {
  it.each([
    ['nothing', {}, undefined],
    ['Bearer', { authorization: 'Bearer k1' }, 'k1'],
    ['bearer, any case, extra spaces', { authorization: 'bEaReR   k1  ' }, 'k1'],
    ['x-api-key', { 'x-api-key': 'k1' }, 'k1'],
    ['both, equal', { authorization: 'Bearer k1', 'x-api-key': 'k1' }, 'k1'],
    ['both, different', { authorization: 'Bearer k1', 'x-api-key': 'k2' }, null],
    ['Basic scheme', { authorization: 'Basic k1' }, null],
    ['no scheme', { authorization: 'k1' }, null],
    ['Bearer without token', { authorization: 'Bearer ' }, null],
    ['two tokens', { authorization: 'Bearer k1 k2' }, null],
    ['empty x-api-key', { 'x-api-key': '' }, null],
    ['repeated header', { 'x-api-key': ['k1', 'k2'] }, null],
    ['Basic plus x-api-key', { authorization: 'Basic a', 'x-api-key': 'k1' }, null],
  ])('%s', (_name, headers, expected) => {
    expect(presentedKey(headers)).toBe(expected);
  });
});

describe(repeatsCredentialHeader.name, () => {
  it.each([
    [[], false],
    [['Authorization', 'Bearer k1', 'Host', 'x'], false],
    [['Authorization', 'Bearer k1', 'x-api-key', 'k1'], false],
    [['Authorization', 'Bearer k1', 'authorization', 'Bearer k1'], true],
    [['X-API-Key', 'k1', 'x-api-key', 'k1'], true],
    [['accept', 'a', 'accept', 'b'], false],
  ])('%j → %s', (raw, expected) => {
    expect(repeatsCredentialHeader(raw)).toBe(expected);
  });

  it('makes presentedKey refuse the request even though the parsed headers hold one value', () => {
    const headers = { authorization: 'Bearer k1' };
    expect(presentedKey(headers, ['authorization', 'Bearer k1', 'Authorization', 'Bearer k1'])).toBeNull();
    expect(presentedKey(headers, ['authorization', 'Bearer k1'])).toBe('k1');
  });
});
