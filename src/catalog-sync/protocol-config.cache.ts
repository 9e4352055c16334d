import { Inject, Injectable } from '@nestjs/common';
import { UpstreamClient } from '../upstream/upstream.client';
import { ProtocolConfigRepository, type StoredProtocolConfig } from './protocol-config.repository';
import { SYNC_LOGGER, type SyncLogger } from './sync-pass.runner';

export interface ProtocolConfigView {
  stablecoinDecimals: number;
  stablecoinMint: string | null;
  fetchedAt: Date;
}

/**
 * The upstream's protocol config (`stablecoin_decimals`, the mint): kept in memory, stored in the database so a
 * restart or another replica has it before the upstream answers, and fetched one request at a time.
 */
@Injectable()
export class ProtocolConfigCache {
  private cached: StoredProtocolConfig | null = null;
  private fetching: Promise<StoredProtocolConfig | null> | null = null;

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly store: ProtocolConfigRepository,
    @Inject(SYNC_LOGGER) private readonly logger: SyncLogger,
  ) {}

  /** The cached protocol config (memory, else the database, else fetched now); null if never obtained. */
  async view(): Promise<ProtocolConfigView | null> {
    if (!this.cached) this.cached = await this.store.load();
    if (!this.cached) await this.refresh().catch(() => undefined);
    const c = this.cached;
    return c
      ? { stablecoinDecimals: c.stablecoinDecimals, stablecoinMint: c.stablecoinMint, fetchedAt: c.fetchedAt }
      : null;
  }

  /** Fetches (validated by the client) and stores the protocol config; one fetch at a time. */
  refresh(): Promise<StoredProtocolConfig | null> {
    this.fetching ??= (async () => {
      try {
        const fetched = await this.upstream.getProtocolConfig();
        this.cached = await this.store.save({
          stablecoinDecimals: fetched.stablecoinDecimals,
          stablecoinMint: fetched.stablecoinMint,
          raw: JSON.parse(JSON.stringify(fetched.raw)) as Record<string, unknown>,
        });
        return this.cached;
      } catch (error) {
        this.logger.warn({ err: error }, 'protocol config refresh failed; keeping the cached one');
        return this.cached;
      } finally {
        this.fetching = null;
      }
    })();
    return this.fetching;
  }
}
