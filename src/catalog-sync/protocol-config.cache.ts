import { Inject, Injectable } from '@nestjs/common';
import { SyncConfig } from '../config/sync.config';
import { UpstreamClient } from '../upstream/upstream.client';
import type { UpstreamCallOptions } from '../upstream/upstream.types';
import { ProtocolConfigRepository, type StoredProtocolConfig } from './protocol-config.repository';
import { SYNC_LOGGER, type SyncLogger } from './sync-pass.runner';

export interface ProtocolConfigView {
  stablecoinDecimals: number;
  stablecoinMint: string | null;
  /** The whole config as received (integrator addresses for checkout and selling live here). */
  raw: Record<string, unknown>;
  fetchedAt: Date;
}

/**
 * The service's one protocol-config cache (`stablecoin_decimals`, the mint, the integrator addresses): kept in
 * memory, stored in the database so a restart or another replica has it before the upstream answers, fetched one
 * request at a time. The read API, checkout and selling all ask this cache (through CatalogSyncService); the
 * scheduler refetches it every SYNC_PROTOCOL_CONFIG_REFRESH_MS, and a replica whose memory copy is older than
 * that re-reads the stored one (another replica's scheduler may have refreshed it, or this one runs with
 * SYNC_ENABLED=false).
 */
@Injectable()
export class ProtocolConfigCache {
  private cached: StoredProtocolConfig | null = null;
  /** performance.now() when `cached` was last fetched or loaded (a local age, never compared across replicas). */
  private cachedAt = 0;
  private fetching: Promise<StoredProtocolConfig> | null = null;

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly store: ProtocolConfigRepository,
    private readonly config: SyncConfig,
    @Inject(SYNC_LOGGER) private readonly logger: SyncLogger,
  ) {}

  /** The cached protocol config (memory, else the database, else fetched now); null if never obtained. */
  async view(): Promise<ProtocolConfigView | null> {
    await this.loadIfOld();
    if (!this.cached) await this.refresh();
    return this.cached && toView(this.cached);
  }

  /**
   * As view(), but when nothing is cached the live fetch's error is thrown (an UpstreamError, or the abort reason
   * when `signal` ends the wait first; the shared fetch itself goes on for the other callers).
   */
  async require(
    options: Pick<UpstreamCallOptions, 'signal' | 'requestId'> = {},
  ): Promise<ProtocolConfigView> {
    await this.loadIfOld();
    if (this.cached) return toView(this.cached);
    return toView(await waitFor(this.fetch(options.requestId), options.signal));
  }

  /** Fetches (validated by the client) and stores the protocol config; one fetch at a time. */
  async refresh(): Promise<StoredProtocolConfig | null> {
    try {
      return await this.fetch();
    } catch (error) {
      this.logger.warn({ err: error }, 'protocol config refresh failed; keeping the cached one');
      return this.cached;
    }
  }

  private async loadIfOld(): Promise<void> {
    if (this.cached && performance.now() - this.cachedAt < this.config.SYNC_PROTOCOL_CONFIG_REFRESH_MS)
      return;
    try {
      const stored = await this.store.load();
      if (stored) this.keep(stored);
    } catch (error) {
      // A database hiccup keeps the memory copy (if any): the config changes rarely.
      if (!this.cached) throw error;
    }
  }

  private fetch(requestId?: string): Promise<StoredProtocolConfig> {
    this.fetching ??= (async () => {
      try {
        const fetched = await this.upstream.getProtocolConfig({ requestId });
        return this.keep(
          await this.store.save({
            stablecoinDecimals: fetched.stablecoinDecimals,
            stablecoinMint: fetched.stablecoinMint,
            raw: JSON.parse(JSON.stringify(fetched.raw)) as Record<string, unknown>,
          }),
        );
      } finally {
        this.fetching = null;
      }
    })();
    return this.fetching;
  }

  private keep(config: StoredProtocolConfig): StoredProtocolConfig {
    this.cached = config;
    this.cachedAt = performance.now();
    return config;
  }
}

function toView(c: StoredProtocolConfig): ProtocolConfigView {
  return {
    stablecoinDecimals: c.stablecoinDecimals,
    stablecoinMint: c.stablecoinMint,
    raw: c.raw,
    fetchedAt: c.fetchedAt,
  };
}

/** `work`, or the signal's reason if it aborts first (`work` goes on; its rejection is then ignored). */
function waitFor<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  // The shared fetch goes on for other callers: its failure must not go unhandled if this caller stops waiting.
  work.catch(() => undefined);
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
