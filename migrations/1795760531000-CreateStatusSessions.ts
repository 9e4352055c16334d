import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The status page's login sessions (src/status/, docs/status.md "Access"): one row per login, the session cookie
 * naming it (HMAC-signed). Every use reads the row, so a logout (`ended_at` set) ends the session on every replica
 * at once; a copied cookie no longer works until its expiry. Rows past their expiry are deleted at the next login.
 */
export class CreateStatusSessions1795760531000 implements MigrationInterface {
  name = 'CreateStatusSessions1795760531000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE status_sessions (
        id uuid PRIMARY KEY,
        client_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        ended_at timestamptz
      )
    `);
    await queryRunner.query(`CREATE INDEX status_sessions_expires_at_idx ON status_sessions (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE status_sessions`);
  }
}
