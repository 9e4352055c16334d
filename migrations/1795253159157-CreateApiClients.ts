import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The service's own callers. A key is stored only as HMAC-SHA256(pepper, key) (`key_hash`); its
 * public lookup id (`key_prefix`) finds the row, the hash is then compared in constant time.
 * `created_by` is the admin client that issued the key over HTTP (null: CLI or bootstrap) and is the
 * owner for the admin endpoints. `created_at` is kept at millisecond precision so a (created_at, id)
 * keyset cursor round-trips through a JavaScript Date.
 */
export class CreateApiClients1795253159157 implements MigrationInterface {
  name = 'CreateApiClients1795253159157';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE api_clients (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        key_prefix text NOT NULL CHECK (char_length(key_prefix) BETWEEN 8 AND 32),
        key_hash bytea NOT NULL CHECK (octet_length(key_hash) = 32),
        scopes text[] NOT NULL CHECK (cardinality(scopes) BETWEEN 1 AND 16),
        created_by uuid NULL REFERENCES api_clients (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
        revoked_at timestamptz NULL,
        last_used_at timestamptz NULL
      )
    `);
    await queryRunner.query(`CREATE UNIQUE INDEX api_clients_key_prefix_key ON api_clients (key_prefix)`);
    await queryRunner.query(`CREATE UNIQUE INDEX api_clients_key_hash_key ON api_clients (key_hash)`);
    await queryRunner.query(
      `CREATE INDEX api_clients_created_by_created_at_idx ON api_clients (created_by, created_at DESC, id DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE api_clients`);
  }
}
