import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deliveries given up on, by when (updated_at: set when a delivery turns `failed`), for the status page's "given
 * up, 24 h" (src/status/status-figures.repository.ts, docs/status.md). Without it every page load, refresh and
 * `GET /v1/admin/status` scanned every delivery kept (WEBHOOKS_RETENTION_DAYS, 30 by default). Partial: only `failed` rows, a small
 * share of the table, so writes to pending and delivered rows never touch it.
 *
 * Built CONCURRENTLY, outside a transaction (`transaction = false`), so that deliveries keep being written while it
 * builds on a large table; a build that failed half-way leaves an invalid index that the next run drops first.
 */
export class CreateWebhookDeliveriesFailedIndex1795756749194 implements MigrationInterface {
  name = 'CreateWebhookDeliveriesFailedIndex1795756749194';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_failed_idx`);
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY webhook_deliveries_failed_idx ON webhook_deliveries (updated_at)
       WHERE status = 'failed'`,
    );
  }

  // Reverting runs inside a transaction (TypeORM's undo ignores `transaction = false`): a plain DROP.
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX webhook_deliveries_failed_idx`);
  }
}
