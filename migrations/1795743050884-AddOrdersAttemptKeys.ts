import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What an order's attempt keys (its ledger transaction key and the upstream idempotency key derived from it) are
 * derived from (src/checkout/checkout.context.ts transactionKey). Rows made before are `order_id` (the order's
 * row id: an attempt in flight across the upgrade keeps its key); the service inserts `client_key` (the client's
 * Idempotency-Key), so a client's retry after the order's row was lost reaches the same upstream transaction.
 * A column with a constant default: metadata only, no table rewrite.
 */
export class AddOrdersAttemptKeys1795743050884 implements MigrationInterface {
  name = 'AddOrdersAttemptKeys1795743050884';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE orders ADD COLUMN attempt_keys text NOT NULL DEFAULT 'order_id'
         CONSTRAINT orders_attempt_keys_check CHECK (attempt_keys IN ('order_id', 'client_key'))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE orders DROP COLUMN attempt_keys`);
  }
}
