import { afterEach, describe, expect, it } from 'vitest';
import { armCrashPoints, crashPoint, parseCrashPoints } from './crash-points';

describe('crashPoint', () => {
  afterEach(() => armCrashPoints(undefined, false));

  it('fires at the named point, the n-th time when asked', () => {
    const kills: string[] = [];
    armCrashPoints('before_sign,after_submit@3', true, () => kills.push('kill'));
    crashPoint('after_submit');
    crashPoint('after_submit');
    expect(kills).toEqual([]);
    crashPoint('after_submit');
    expect(kills).toEqual(['kill']);
    crashPoint('before_sign');
    expect(kills).toEqual(['kill', 'kill']);
    crashPoint('before_sign');
    expect(kills).toHaveLength(2);
  });

  it('stops instead of killing at a point armed with :stop (the n-th time when asked)', () => {
    const seen: string[] = [];
    armCrashPoints(
      'after_revalidate@2:stop,before_sign',
      true,
      () => seen.push('kill'),
      () => seen.push('stop'),
    );
    crashPoint('after_revalidate');
    expect(seen).toEqual([]);
    crashPoint('after_revalidate');
    crashPoint('before_sign');
    expect(seen).toEqual(['stop', 'kill']);
  });

  it('is inert unless allowed (NODE_ENV=test)', () => {
    const kills: string[] = [];
    armCrashPoints('before_sign', false, () => kills.push('kill'));
    crashPoint('before_sign');
    expect(kills).toEqual([]);
  });

  it('refuses unknown names', () => {
    expect(() => parseCrashPoints('before_lunch')).toThrow(/unknown crash point/);
    expect(parseCrashPoints('before_sign@2')).toEqual(new Map([['before_sign', 2]]));
  });
});
