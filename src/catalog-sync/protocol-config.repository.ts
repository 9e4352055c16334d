import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL } from '../database/database.module';
import type { Sql } from './sql';

export interface StoredProtocolConfig {
  stablecoinDecimals: number;
  stablecoinMint: string | null;
  raw: Record<string, unknown>;
  fetchedAt: Date;
}

/**
 * Every write of `protocol_config` and the cache's read of the stored row (ProtocolConfigCache). The mirror state
 * (catalog-mirror.repository.ts) reads it too, in the one statement that reads the generation: both in
 * catalog-sync, the table's one owner.
 */
@Injectable()
export class ProtocolConfigRepository {
  /** The app's pg pool in the module (PG_POOL); tests and benches may pass a pool or a held client. */
  constructor(@Inject(PG_POOL) private readonly sql: Sql) {}

  async save(config: Omit<StoredProtocolConfig, 'fetchedAt'>): Promise<StoredProtocolConfig> {
    const { rows } = await this.sql.query<{ fetched_at: Date }>(
      `INSERT INTO protocol_config (id, stablecoin_decimals, stablecoin_mint, raw, fetched_at)
       VALUES (true, $1, $2, $3::jsonb, now())
       ON CONFLICT (id) DO UPDATE SET stablecoin_decimals = excluded.stablecoin_decimals,
         stablecoin_mint = excluded.stablecoin_mint, raw = excluded.raw, fetched_at = excluded.fetched_at
       RETURNING fetched_at`,
      [config.stablecoinDecimals, config.stablecoinMint, JSON.stringify(config.raw)],
    );
    return { ...config, fetchedAt: rows[0].fetched_at };
  }

  async load(): Promise<StoredProtocolConfig | null> {
    const { rows } = await this.sql.query<{
      stablecoin_decimals: number;
      stablecoin_mint: string | null;
      raw: Record<string, unknown>;
      fetched_at: Date;
    }>(`SELECT stablecoin_decimals, stablecoin_mint, raw, fetched_at FROM protocol_config WHERE id`);
    const row = rows[0];
    return row
      ? {
          stablecoinDecimals: row.stablecoin_decimals,
          stablecoinMint: row.stablecoin_mint,
          raw: row.raw,
          fetchedAt: row.fetched_at,
        }
      : null;
  }
}
