import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The lookups of `catalog_removal_reason` (…-CreateCatalogEvents.ts): a removed listing's reason is `sold` when an
 * order of this service bought that ticket, `cancelled` when a cancel_listing_v1 transaction of it was submitted.
 * Without these, each removal announced to a subscriber scanned every order and every cancel transaction.
 * Both are partial to what the lookup asks, so neither costs the order insert or a plain ledger write anything.
 * Built CONCURRENTLY, outside a transaction, as …-CreateOrdersFinalIndex.ts (a failed build is dropped first).
 */
export class CreateRemovalReasonIndexes1795841037913 implements MigrationInterface {
  name = 'CreateRemovalReasonIndexes1795841037913';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS orders_ticket_idx`);
    // Partial: only orders that bought (the lookup's own predicate). An order is inserted `created`, so the
    // insert on checkout's path maintains nothing here, and the planner never takes it for the per-buyer counts
    // of orders_create (a whole-event index there would scan a busy event's every order instead of the buyer's).
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY orders_ticket_idx ON orders (event_id, ticket_id)
         WHERE state IN ('submitted', 'confirmed')`,
    );
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
