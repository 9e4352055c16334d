import { describe, expect, it } from 'vitest';
import { loadSyncConfig, SyncConfig } from './sync.config';
import { configProblems } from './validate-env';

const problemsOf = (env: NodeJS.ProcessEnv): readonly string[] => configProblems(() => loadSyncConfig(env));

describe(SyncConfig.name, () => {
  it('defaults the hot walks to a 2 s ceiling and a 500 ms floor', () => {
    const sut = loadSyncConfig({});
    expect(sut.SYNC_HOT_TARGET_MS).toBe(2000);
    expect(sut.SYNC_HOT_MIN_INTERVAL_MS).toBe(500);
  });

  it('reads SYNC_HOT_MIN_INTERVAL_MS and refuses a floor below 100 ms, naming the variable', () => {
    expect(loadSyncConfig({ SYNC_HOT_MIN_INTERVAL_MS: '750' }).SYNC_HOT_MIN_INTERVAL_MS).toBe(750);
    expect(problemsOf({ SYNC_HOT_MIN_INTERVAL_MS: '50' }).map((p) => p.split(':')[0])).toEqual([
      'SYNC_HOT_MIN_INTERVAL_MS',
    ]);
  });
});
