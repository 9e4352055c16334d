import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A key's subject binding (docs/SECURITY.md, "Subject bindings"): the user and integrator subject patterns
 * it may act for. Both null: unbound, any subject (every key issued before this migration). Both or neither:
 * a bound key has two lists, either possibly empty. The lists are bounded as the admin API bounds them.
 * `api_clients` is small (one row per key): the CHECKs are validated at once.
 */
export class AddApiClientsSubjectBinding1795744217137 implements MigrationInterface {
  name = 'AddApiClientsSubjectBinding1795744217137';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE api_clients
        ADD COLUMN user_subject_patterns text[] NULL,
        ADD COLUMN integrator_subject_patterns text[] NULL,
        ADD CONSTRAINT api_clients_binding_whole
          CHECK ((user_subject_patterns IS NULL) = (integrator_subject_patterns IS NULL)),
        ADD CONSTRAINT api_clients_binding_size
          CHECK (coalesce(cardinality(user_subject_patterns), 0) <= 100
             AND coalesce(cardinality(integrator_subject_patterns), 0) <= 100)
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE api_clients
        DROP CONSTRAINT api_clients_binding_size,
        DROP CONSTRAINT api_clients_binding_whole,
        DROP COLUMN integrator_subject_patterns,
        DROP COLUMN user_subject_patterns
    `);
  }
}
