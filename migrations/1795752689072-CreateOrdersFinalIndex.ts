import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Orders by the time they became final, for the status page's per-minute figures (src/status/: finals by outcome
 * and time to final each minute; docs/status.md). Without it the recorder's once-a-minute read of the last minute's
 * finals scanned every order. Partial: rows still in flight have no final_at.
 *
 * Built CONCURRENTLY, outside a transaction (`transaction = false`), so that orders keep being taken while it
 * builds on a large table; a build that failed half-way leaves an invalid index that the next run drops first.
 */
export class CreateOrdersFinalIndex1795752689072 implements MigrationInterface {
  name = 'CreateOrdersFinalIndex1795752689072';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS orders_final_at_idx`);
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY orders_final_at_idx ON orders (final_at) WHERE final_at IS NOT NULL`,
    );
  }

  // Reverting runs inside a transaction (TypeORM's undo ignores `transaction = false`): a plain DROP.
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX orders_final_at_idx`);
  }
}
