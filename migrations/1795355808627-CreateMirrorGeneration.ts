import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A counter bumped (+1) in the transaction that commits any change to `events`/`listings`, with
 * `NOTIFY mirror_generation, '<generation>'` in that transaction. The read API keys its cache by it.
 */
export class CreateMirrorGeneration1795355808627 implements MigrationInterface {
  name = 'CreateMirrorGeneration1795355808627';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE mirror_generation (
        id boolean PRIMARY KEY DEFAULT true CHECK (id),
        generation bigint NOT NULL CHECK (generation >= 0),
        changed_at timestamptz NOT NULL
      )
    `);
    await queryRunner.query(`INSERT INTO mirror_generation (generation, changed_at) VALUES (0, now())`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE mirror_generation`);
  }
}
