import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The buyer's open orders, for the open-orders limit counted under the buyer's lock on every new order
 * (checkout/order.repository.ts CREATE_SQL). Without it the count read every order the buyer ever placed
 * with this client, so a buyer's order cost grew with their history. Partial like the due index: open rows
 * only, so it stays as small as the open orders. (The per-event limit counts through orders_buyer_idx,
 * whose third column is the event.)
 *
 * Built CONCURRENTLY, outside a transaction (`transaction = false`), so that orders keep being taken while it
 * builds on a large table. A build that failed half-way leaves an invalid index and no record of this migration:
 * the next run drops that index first.
 */
export class CreateOrdersBuyerOpenIndex1795415873701 implements MigrationInterface {
  name = 'CreateOrdersBuyerOpenIndex1795415873701';
  transaction = false;

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX CONCURRENTLY IF EXISTS orders_buyer_open_idx`);
    await queryRunner.query(
      `CREATE INDEX CONCURRENTLY orders_buyer_open_idx ON orders (client_id, buyer_subject)
         WHERE state NOT IN ('confirmed', 'landed_with_error', 'rejected', 'failed')`,
    );
  }

  // Reverting runs inside a transaction (TypeORM's undo ignores `transaction = false`): a plain DROP.
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX orders_buyer_open_idx`);
  }
}
