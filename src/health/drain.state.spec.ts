import { describe, expect, it } from 'vitest';
import { DrainState } from './drain.state';

describe(DrainState.name, () => {
  it('is not draining until begin(), then stays draining', () => {
    const sut = new DrainState();
    expect(sut.draining).toBe(false);
    sut.begin();
    expect(sut.draining).toBe(true);
    sut.begin();
    expect(sut.draining).toBe(true);
  });
});
