import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The read API's `sort=newest` (first_seen_at DESC, event_id DESC, ticket_id DESC), across events and
 * within one event, as index range scans like the price sorts: without these a newest page sorts every
 * active listing (about a second at 1M rows). Partial like the others: active rows only.
 */
export class CreateListingsNewestIndexes1795356059963 implements MigrationInterface {
  name = 'CreateListingsNewestIndexes1795356059963';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX listings_newest_idx ON listings (first_seen_at, event_id, ticket_id) WHERE removed_at IS NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX listings_event_newest_idx ON listings (event_id, first_seen_at, ticket_id) WHERE removed_at IS NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX listings_event_newest_idx`);
    await queryRunner.query(`DROP INDEX listings_newest_idx`);
  }
}
