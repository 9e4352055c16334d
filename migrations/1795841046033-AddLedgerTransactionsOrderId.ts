import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The checkout order a ledger transaction is an attempt of (issue 33): its after-final handler finds the order by
 * it instead of parsing the transaction's key. Nullable, no default: a metadata-only change, no table rewrite;
 * rows written before it (and every transaction not made by checkout) stay NULL. No foreign key: `orders` is
 * checkout's table, and a row may name an order whose row was lost (the client's retry makes a new one).
 */
export class AddLedgerTransactionsOrderId1795841046033 implements MigrationInterface {
  name = 'AddLedgerTransactionsOrderId1795841046033';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ledger_transactions ADD COLUMN order_id uuid`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ledger_transactions DROP COLUMN order_id`);
  }
}
