import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The outbox is written by the state changes themselves (owned by `webhooks/`, docs/webhooks.md "Where events come
 * from"): row triggers on `orders`, `ledger_transactions` and `sync_passes` append the event in the same
 * transaction as the change, on every path that makes it (a drive's commit, a takeover's, the reconciler's
 * reopen, a sync pass's finish), so an event can neither be missing for a committed change nor exist for a
 * rolled-back one, and no application statement pays a round trip for it.
 *
 * `outbox_append` is the one place an event and its deliveries are inserted (the service's own appends call it
 * too: src/webhooks/outbox.repository.ts): one delivery per enabled endpoint of the owner whose filter takes the
 * type (operator events: endpoints of admin keys). The `data` shapes are those of src/webhooks/webhook-events.ts
 * (version 1 each); u64 values as decimal strings.
 *
 * Which changes announce what:
 * - an order inserted: `order.created`; its `state` changed: `order.<state>` for the final states (confirmed,
 *   landed_with_error, rejected, failed), `order.state_changed` otherwise (several steps committed at once
 *   announce the state they reached);
 * - a ledger transaction (not an order's attempt: those are announced as orders) that became final (`final_at`
 *   set) or stopped being tracked (`tracking_stopped` set): `transaction.final`, and for list/cancel batches
 *   also `listing.transaction_final`;
 * - a sync pass that left `running`: `sync.pass_completed`, or `sync.pass_failed` (failed or cancelled).
 */
export class CreateOutboxTriggers1795746593082 implements MigrationInterface {
  name = 'CreateOutboxTriggers1795746593082';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION outbox_append(p_id text, p_type text, p_version smallint, p_client uuid, p_data jsonb)
      RETURNS void LANGUAGE sql AS $$
        WITH ev AS (
          INSERT INTO outbox_events (id, type, version, client_id, payload)
          VALUES (p_id, p_type, p_version, p_client, p_data)
          RETURNING id, type, client_id)
        INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at)
        SELECT e.id, ev.id, clock_timestamp()
        FROM ev JOIN webhook_endpoints e ON e.enabled
          AND (e.client_id = ev.client_id OR (ev.client_id IS NULL AND e.operator_events))
          AND (cardinality(e.event_types) = 0 OR ev.type = ANY (e.event_types))
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION outbox_event_id() RETURNS text LANGUAGE sql VOLATILE AS $$
        SELECT 'evt_' || replace(gen_random_uuid()::text, '-', '')
      $$`);
    await queryRunner.query(`
      CREATE FUNCTION outbox_order_events() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM outbox_append(outbox_event_id(), 'order.created', 1::smallint, NEW.client_id, jsonb_build_object(
            'order_id', NEW.id, 'state', NEW.state, 'buyer_subject', NEW.buyer_subject,
            'event_id', NEW.event_id::text, 'ticket_id', NEW.ticket_id::text,
            'expected_price_minor', NEW.expected_price_minor::text));
        ELSIF NEW.state IN ('confirmed', 'landed_with_error', 'rejected', 'failed') THEN
          PERFORM outbox_append(outbox_event_id(), 'order.' || NEW.state, 1::smallint, NEW.client_id,
            jsonb_build_object(
              'order_id', NEW.id, 'state', NEW.state, 'attempt', NEW.attempt,
              'event_id', NEW.event_id::text, 'ticket_id', NEW.ticket_id::text,
              'price_minor', (CASE WHEN NEW.state = 'confirmed' THEN NEW.expected_price_minor
                                   ELSE coalesce(NEW.current_price_minor, NEW.expected_price_minor) END)::text,
              'failure', CASE WHEN NEW.failure_code IS NULL THEN NULL
                              ELSE jsonb_build_object('code', NEW.failure_code, 'reason', coalesce(NEW.failure_reason, '')) END,
              'transaction_signature', NEW.transaction_signature));
        ELSE
          PERFORM outbox_append(outbox_event_id(), 'order.state_changed', 1::smallint, NEW.client_id,
            jsonb_build_object('order_id', NEW.id, 'state', NEW.state, 'previous_state', OLD.state,
              'attempt', NEW.attempt));
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER orders_outbox_created AFTER INSERT ON orders
         FOR EACH ROW EXECUTE FUNCTION outbox_order_events()`,
    );
    await queryRunner.query(
      `CREATE TRIGGER orders_outbox_state AFTER UPDATE OF state ON orders
         FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION outbox_order_events()`,
    );
    await queryRunner.query(`
      CREATE FUNCTION outbox_ledger_events() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        outcome text := CASE WHEN NEW.final_at IS NOT NULL THEN coalesce(NEW.status, 'final')
                             ELSE NEW.tracking_stopped END;
        params jsonb := NEW.request -> 'platformInstructions' -> 'params' -> 0;
      BEGIN
        -- An order's attempt is announced as the order (order.* events), not twice.
        IF NEW.idempotency_key LIKE 'checkout:%' THEN RETURN NULL; END IF;
        PERFORM outbox_append(outbox_event_id(), 'transaction.final', 1::smallint, NEW.client_id, jsonb_build_object(
          'idempotency_key', NEW.idempotency_key, 'custodial_transaction_id', NEW.custodial_transaction_id,
          'kind', NEW.kind, 'instruction', NEW.instruction, 'status', outcome,
          'failure_reason', NEW.failure_reason, 'signature', NEW.fee_payer_signature));
        IF NEW.instruction IN ('list_ticket_v2', 'cancel_listing_v1') THEN
          PERFORM outbox_append(outbox_event_id(), 'listing.transaction_final', 1::smallint, NEW.client_id,
            jsonb_build_object(
              'idempotency_key', NEW.idempotency_key,
              'action', CASE WHEN NEW.instruction = 'list_ticket_v2' THEN 'list' ELSE 'cancel' END,
              'event_id', params ->> 'event_id', 'ticket_id', params ->> 'ticket_id', 'status', outcome,
              'failure_reason', NEW.failure_reason, 'signature', NEW.fee_payer_signature));
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER ledger_transactions_outbox_final AFTER UPDATE OF final_at, tracking_stopped ON ledger_transactions
         FOR EACH ROW
         WHEN ((OLD.final_at IS NULL AND NEW.final_at IS NOT NULL)
           OR (OLD.final_at IS NULL AND OLD.tracking_stopped IS NULL AND NEW.tracking_stopped IS NOT NULL))
         EXECUTE FUNCTION outbox_ledger_events()`,
    );
    await queryRunner.query(`
      CREATE FUNCTION outbox_sync_events() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        scope text := coalesce(NEW.scope_event_id::text, 'all');
      BEGIN
        IF NEW.status = 'completed' THEN
          PERFORM outbox_append(outbox_event_id(), 'sync.pass_completed', 1::smallint, NULL, jsonb_build_object(
            'pass_id', NEW.id::text, 'resource', NEW.resource, 'scope', scope,
            'items', NEW.items, 'upserted', NEW.upserted, 'removed', NEW.removed));
        ELSE
          PERFORM outbox_append(outbox_event_id(), 'sync.pass_failed', 1::smallint, NULL, jsonb_build_object(
            'pass_id', NEW.id::text, 'resource', NEW.resource, 'scope', scope,
            'error', left(coalesce(NEW.error, NEW.status), 200)));
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(
      `CREATE TRIGGER sync_passes_outbox_finished AFTER UPDATE OF status ON sync_passes
         FOR EACH ROW WHEN (OLD.status = 'running' AND NEW.status <> 'running')
         EXECUTE FUNCTION outbox_sync_events()`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER sync_passes_outbox_finished ON sync_passes`);
    await queryRunner.query(`DROP TRIGGER ledger_transactions_outbox_final ON ledger_transactions`);
    await queryRunner.query(`DROP TRIGGER orders_outbox_state ON orders`);
    await queryRunner.query(`DROP TRIGGER orders_outbox_created ON orders`);
    await queryRunner.query(`DROP FUNCTION outbox_sync_events()`);
    await queryRunner.query(`DROP FUNCTION outbox_ledger_events()`);
    await queryRunner.query(`DROP FUNCTION outbox_order_events()`);
    await queryRunner.query(`DROP FUNCTION outbox_event_id()`);
    await queryRunner.query(`DROP FUNCTION outbox_append(text, text, smallint, uuid, jsonb)`);
  }
}
