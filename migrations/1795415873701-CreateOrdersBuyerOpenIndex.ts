import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The buyer's open orders, for the open-orders limit counted under the buyer's lock on every new order
 * (checkout/order.repository.ts CREATE_SQL). Without it the count read every order the buyer ever placed
 * with this client, so a buyer's order cost grew with their history. Partial like the due index: open rows
 * only, so it stays as small as the open orders. (The per-event limit counts through orders_buyer_idx,
 * whose third column is the event.)
 */
export class CreateOrdersBuyerOpenIndex1795415873701 implements MigrationInterface {
  name = 'CreateOrdersBuyerOpenIndex1795415873701';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX orders_buyer_open_idx ON orders (client_id, buyer_subject)
         WHERE state NOT IN ('confirmed', 'landed_with_error', 'rejected', 'failed')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX orders_buyer_open_idx`);
  }
}
