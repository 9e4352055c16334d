import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The upstream protocol config as last fetched (singleton row): the read API formats money with it. */
export class CreateProtocolConfig1795355807791 implements MigrationInterface {
  name = 'CreateProtocolConfig1795355807791';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE protocol_config (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        stablecoin_decimals smallint NOT NULL CHECK (stablecoin_decimals BETWEEN 0 AND 18),
        stablecoin_mint text NULL,
        raw jsonb NOT NULL,
        fetched_at timestamptz NOT NULL
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE protocol_config`);
  }
}
