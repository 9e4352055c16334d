import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The checkout order a ledger transaction is an attempt of (issue 33): its after-final handler finds the order by
 * it instead of parsing the transaction's key. A table of its own, not a column of `ledger_transactions`: the
 * ledger's statements are prepared `SELECT *` / `RETURNING *`, and a new column changes their result type under
 * the replicas still running the previous release during a rolling deploy ("cached plan must not change result
 * type"; the same reason as `order_traces`, …-CreateOrderTraces.ts). Written in the statement that inserts the
 * ledger row; transactions not made by checkout, and rows written before this table, have none. No foreign key
 * to `orders`: that is checkout's table, and a row may name an order whose row was lost (the client's retry makes a
 * new one). Owned by transactions.
 */
export class CreateLedgerTransactionOrders1795841046033 implements MigrationInterface {
  name = 'CreateLedgerTransactionOrders1795841046033';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE ledger_transaction_orders (
        transaction_id uuid PRIMARY KEY REFERENCES ledger_transactions (id) ON DELETE CASCADE,
        order_id uuid NOT NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE ledger_transaction_orders`);
  }
}
