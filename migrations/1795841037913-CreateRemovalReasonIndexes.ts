import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The lookups of `catalog_removal_reason` (…-CreateCatalogEvents.ts): a removed listing's reason is `sold` when an
 * order of this service bought that ticket, `cancelled` when a cancel_listing_v1 transaction of it was submitted.
 * Without these, each removal announced to a subscriber scanned every order and every cancel transaction.
 * Built CONCURRENTLY, outside a transaction, as …-CreateOrdersFinalIndex.ts (a failed build is dropped first).
 */
export class CreateRemovalReasonIndexes1795841037913 implements MigrationInterface {
  name = 'CreateRemovalReasonIndexes1795841037913';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS orders_ticket_idx`);
    await queryRunner.query(`CREATE INDEX CONCURRENTLY orders_ticket_idx ON orders (event_id, ticket_id)`);
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS ledger_transactions_cancel_params_idx`);
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY ledger_transactions_cancel_params_idx ON ledger_transactions
         USING gin ((request -> 'platformInstructions' -> 'params') jsonb_path_ops)
         WHERE instruction = 'cancel_listing_v1'`,
    );
  }

  // Reverting runs inside a transaction (TypeORM's undo ignores `transaction = false`): a plain DROP.
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX ledger_transactions_cancel_params_idx`);
    await queryRunner.query(`DROP INDEX orders_ticket_idx`);
  }
}
