import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * How many times the tracker ran a ledger transaction's after-final handler (`on_final`): its retry backoff grows
 * with it, and a handler registered with a try limit (the mirror refresh) is given up after that many. A constant
 * default: a metadata-only change, no table rewrite.
 */
export class AddLedgerTransactionsOnFinalAttempts1795743618339 implements MigrationInterface {
  name = 'AddLedgerTransactionsOnFinalAttempts1795743618339';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE ledger_transactions ADD COLUMN on_final_attempts integer NOT NULL DEFAULT 0`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE ledger_transactions DROP COLUMN on_final_attempts`);
  }
}
