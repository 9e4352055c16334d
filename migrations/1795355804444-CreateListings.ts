import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The mirror of the upstream's active listings (owned by catalog-sync). `raw` keeps every field as received
 * (seller, seller_payout, permit_version, royalty_destinations, …) with u64 identifiers and price as decimal
 * strings; `expires_at` (i64 unix seconds) is copied out when present. Same bookkeeping as `events`.
 * No foreign key to events: the two resources are walked independently and may disagree for a moment.
 */
export class CreateListings1795355804444 implements MigrationInterface {
  name = 'CreateListings1795355804444';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE listings (
        event_id u64 NOT NULL,
        ticket_id u64 NOT NULL,
        ask_price_minor u64 NOT NULL,
        expires_at bigint NULL,
        raw jsonb NOT NULL,
        first_seen_at timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL,
        removed_at timestamptz NULL,
        observed_at timestamptz NOT NULL,
        last_seen_pass bigint NULL,
        PRIMARY KEY (event_id, ticket_id)
      )
    `);
    await queryRunner.query(
      `CREATE INDEX listings_event_price_idx ON listings (event_id, ask_price_minor, ticket_id) WHERE removed_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX listings_price_idx ON listings (ask_price_minor, event_id, ticket_id) WHERE removed_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE listings`);
  }
}
