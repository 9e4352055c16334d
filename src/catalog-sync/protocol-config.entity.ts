import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The upstream protocol config as last fetched (table `protocol_config`, one row). */
@Entity({ name: 'protocol_config' })
export class ProtocolConfigEntity {
  @PrimaryColumn({ type: 'boolean', default: true })
  id: boolean;

  @Column({ name: 'stablecoin_decimals', type: 'smallint' })
  stablecoinDecimals: number;

  @Column({ name: 'stablecoin_mint', type: 'text', nullable: true })
  stablecoinMint: string | null;

  @Column({ type: 'jsonb' })
  raw: Record<string, unknown>;

  @Column({ name: 'fetched_at', type: 'timestamptz' })
  fetchedAt: Date;
}
