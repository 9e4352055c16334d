import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `endpoint.disabled` (issue 31 item 10, docs/webhooks.md): a row trigger on `webhook_endpoints` announces, in the
 * transaction (and statement) that disables an endpoint, one event through `outbox_append` like the other outbox
 * triggers (…-CreateOutboxTriggers.ts) — on every path that disables one: after failing for
 * WEBHOOKS_DISABLE_AFTER_HOURS (`automatic`), a revoked key (`key_revoked`), PATCH enabled=false (`manual`). The
 * event goes to the owner's feed and to its endpoints still enabled when the statement ends (the disabled one, and
 * every endpoint the same statement disabled, get no delivery: AFTER ROW triggers run at the statement's end).
 * `url` is the origin only (scheme, host, port): a path or query may carry a receiver's token.
 */
export class CreateEndpointDisabledTrigger1795831000000 implements MigrationInterface {
  name = 'CreateEndpointDisabledTrigger1795831000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION outbox_endpoint_disabled() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM outbox_append(outbox_event_id(), 'endpoint.disabled', 1::smallint, NEW.client_id, jsonb_build_object(
          'endpoint_id', NEW.id::text,
          'url', regexp_replace(NEW.url, '^([A-Za-z][A-Za-z0-9+.-]*://)([^@/?#]*@)?([^/?#]*).*$', '\\1\\3'),
          'reason', CASE
            WHEN NEW.disabled_reason LIKE 'every delivery failed%' THEN 'automatic'
            WHEN NEW.disabled_reason LIKE '%was revoked%' THEN 'key_revoked'
            ELSE 'manual' END,
          'detail', NEW.disabled_reason,
          'disabled_at', to_char(coalesce(NEW.disabled_at, clock_timestamp()) AT TIME ZONE 'UTC',
                                 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')));
        RETURN NULL;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER webhook_endpoints_outbox_disabled AFTER UPDATE OF enabled ON webhook_endpoints
         FOR EACH ROW WHEN (OLD.enabled AND NOT NEW.enabled) EXECUTE FUNCTION outbox_endpoint_disabled()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER webhook_endpoints_outbox_disabled ON webhook_endpoints`);
    await queryRunner.query(`DROP FUNCTION outbox_endpoint_disabled()`);
  }
}
