import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One index fewer per delivery row (issue 32, docs/BENCHMARKS.md "Session 17: catalog cost"). `webhook_deliveries`
 * had both `UNIQUE (endpoint_id, event_id)` and `webhook_deliveries_event_idx (event_id)`: the unique constraint,
 * its columns swapped to `(event_id, endpoint_id)`, is also the index by event (deleting a pruned event's
 * deliveries, …-DeliveriesWithoutEventForeignKey.ts; reading an event's deliveries), so the second index goes. The
 * uniqueness is the same (one delivery per event and endpoint), and every read by endpoint has an index leading
 * with `endpoint_id` of its own (the log, the fair claim's due and held indexes); the endpoint foreign key's cascade
 * uses the log index. Every delivery insertion maintained six indexes, now five.
 *
 * Built CONCURRENTLY, outside a transaction (`transaction = false`), so deliveries keep being written while it
 * builds on a large table; a build that failed half-way leaves an invalid index that the next run drops first.
 * Each step leaves a valid state: the new unique index exists before the old constraint and index are dropped.
 */
export class DeliveriesIndexedByEvent1795850117302 implements MigrationInterface {
  name = 'DeliveriesIndexedByEvent1795850117302';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_event_endpoint_key`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX CONCURRENTLY webhook_deliveries_event_endpoint_key
         ON webhook_deliveries (event_id, endpoint_id)`,
    );
    await queryRunner.query(`
      ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_event_id_key,
        ADD CONSTRAINT webhook_deliveries_event_endpoint_key UNIQUE USING INDEX webhook_deliveries_event_endpoint_key`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_event_idx`);
  }

  // Reverting runs inside a transaction (TypeORM's undo ignores `transaction = false`): plain builds and drops.
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`);
    await queryRunner.query(`
      ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_endpoint_key,
        ADD CONSTRAINT webhook_deliveries_endpoint_id_event_id_key UNIQUE (endpoint_id, event_id)`);
  }
}
