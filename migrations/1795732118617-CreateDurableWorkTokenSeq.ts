import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The fencing tokens of durable work (src/durable-work/lease.sql.ts): every claim of a leased row (orders,
 * ledger transactions) takes the next value, so a token increases on every claim across every table and
 * replica, and a holder whose row was claimed again after its lease expired no longer matches it.
 */
export class CreateDurableWorkTokenSeq1795732118617 implements MigrationInterface {
  name = 'CreateDurableWorkTokenSeq1795732118617';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE SEQUENCE durable_work_token_seq AS bigint`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP SEQUENCE durable_work_token_seq`);
  }
}
