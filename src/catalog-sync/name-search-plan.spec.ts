import { describe, expect, it } from 'vitest';
import { NAME_SEARCH_RELEARN_EVERY, NameSearchPlans } from './name-search-plan';

describe(NameSearchPlans.name, () => {
  it('walks an unknown term first, keeps walking a dense one and goes to the trigram index for a sparse one', () => {
    const sut = new NameSearchPlans();
    expect(sut.plan('concert')).toBe('walk');
    sut.learn('concert', true);
    expect(sut.plan('event 123')).toBe('walk');
    sut.learn('event 123', false);
    for (let i = 0; i < 10; i++) {
      expect(sut.plan('concert')).toBe('walk');
      expect(sut.plan('event 123')).toBe('trigram');
    }
  });

  it(`tries a sparse term with the walk again every ${NAME_SEARCH_RELEARN_EVERY}th search, so it can become dense`, () => {
    const sut = new NameSearchPlans();
    sut.learn('opera', false);
    const plans = Array.from({ length: NAME_SEARCH_RELEARN_EVERY * 2 }, () => sut.plan('opera'));
    expect(plans.filter((p) => p === 'walk')).toHaveLength(2);
    expect(plans[NAME_SEARCH_RELEARN_EVERY - 1]).toBe('walk');
    sut.learn('opera', true);
    expect(sut.plan('opera')).toBe('walk');
    expect(sut.plan('opera')).toBe('walk');
  });

  it('remembers a bounded number of terms, forgetting the oldest first', () => {
    const sut = new NameSearchPlans(3);
    for (const term of ['a', 'b', 'c', 'd']) sut.learn(term, false);
    expect(sut.size).toBe(3);
    expect(sut.plan('a')).toBe('walk');
    expect(sut.plan('d')).toBe('trigram');
  });
});
