import { describe, expect, it } from 'vitest';
import type { SyncConfig } from '../config/sync.config';
import type { UpstreamClient } from '../upstream/upstream.client';
import { UpstreamError } from '../upstream/upstream.error';
import type { ProtocolConfig } from '../upstream/upstream.types';
import { ProtocolConfigCache } from './protocol-config.cache';
import type { ProtocolConfigRepository, StoredProtocolConfig } from './protocol-config.repository';
import type { SyncLogger } from './sync-pass.runner';

const FETCHED: ProtocolConfig = {
  stablecoinDecimals: 6,
  stablecoinMint: 'mint-1',
  raw: { stablecoin_decimals: 6, integrator_authority: 'auth-1' },
};

function setup(answers: (ProtocolConfig | Error)[], stored: StoredProtocolConfig | null = null) {
  const calls = { fetches: 0, loads: 0 };
  let row = stored;
  const upstream = {
    getProtocolConfig: async () => {
      calls.fetches++;
      await Promise.resolve();
      const answer = answers.shift() ?? new Error('no more answers');
      if (answer instanceof Error) throw answer;
      return answer;
    },
  } as unknown as UpstreamClient;
  const store = {
    load: async () => {
      calls.loads++;
      return row;
    },
    save: async (c: Omit<StoredProtocolConfig, 'fetchedAt'>) => {
      row = { ...c, fetchedAt: new Date('2026-01-01T00:00:00Z') };
      return row;
    },
  } as unknown as ProtocolConfigRepository;
  const logger: SyncLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const sut = new ProtocolConfigCache(
    upstream,
    store,
    { SYNC_PROTOCOL_CONFIG_REFRESH_MS: 3_600_000 } as SyncConfig,
    logger,
  );
  return { sut, calls };
}

const unavailable = (): UpstreamError =>
  new UpstreamError({ code: 'UNAVAILABLE', operation: 'getProtocolConfig', message: '503', attempts: 3 });

describe(ProtocolConfigCache.name, () => {
  it('require(): fetches once when nothing is cached (concurrent callers share it), then answers from memory', async () => {
    const { sut, calls } = setup([FETCHED]);
    const [a, b] = await Promise.all([sut.require(), sut.require()]);
    expect(a).toMatchObject({ stablecoinDecimals: 6, raw: { integrator_authority: 'auth-1' } });
    expect(b).toEqual(a);
    expect(await sut.view()).toEqual(a);
    expect(calls.fetches).toBe(1);
  });

  it("require() throws the live fetch's error when nothing is cached; view() answers null instead", async () => {
    const { sut } = setup([unavailable(), unavailable()]);
    await expect(sut.require()).rejects.toBeInstanceOf(UpstreamError);
    expect(await sut.view()).toBeNull();
  });

  it('answers from the stored row without a fetch (a restart, another replica fetched it)', async () => {
    const stored = { ...FETCHED, fetchedAt: new Date('2026-01-02T00:00:00Z') };
    const { sut, calls } = setup([], stored);
    expect(await sut.require()).toEqual(stored);
    expect(calls.fetches).toBe(0);
  });

  it('a failed refresh keeps the cached config', async () => {
    const { sut } = setup([FETCHED, unavailable()]);
    await sut.refresh();
    expect(await sut.refresh()).toMatchObject({ stablecoinMint: 'mint-1' });
    expect(await sut.require()).toMatchObject({ stablecoinMint: 'mint-1' });
  });

  it("require() with an aborted signal rejects with the signal's reason", async () => {
    const { sut } = setup([FETCHED]);
    const controller = new AbortController();
    controller.abort(new Error('revalidation timed out'));
    await expect(sut.require({ signal: controller.signal })).rejects.toThrow('revalidation timed out');
  });
});
