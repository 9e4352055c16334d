import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Read and order demand per event, across replicas (catalog-sync's hot set, docs/catalog-sync.md "Live
 * catalog"): each replica counts in memory and adds its counts about once a second in one statement. `score`
 * decays exponentially (SYNC_HOT_DEMAND_HALF_LIFE_MS) from `updated_at` (database clock): the stored value is
 * the score at `updated_at`. Rows not touched for a while are deleted by the flush.
 */
export class CreateEventDemand1795829129359 implements MigrationInterface {
  name = 'CreateEventDemand1795829129359';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE event_demand (
        event_id u64 PRIMARY KEY,
        score double precision NOT NULL CHECK (score >= 0),
        updated_at timestamptz NOT NULL DEFAULT now()
      )
    `);
    await queryRunner.query(`CREATE INDEX event_demand_updated_idx ON event_demand (updated_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE event_demand`);
  }
}
