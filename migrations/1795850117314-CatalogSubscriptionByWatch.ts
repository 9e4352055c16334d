import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The catalog change types (as in …-CreateCatalogEvents.ts). */
const CATALOG_TYPES = `ARRAY['listing.listed', 'listing.price_changed', 'listing.removed',
  'event.listed', 'event.updated', 'event.removed']::text[]`;

/** A watch that still subscribes (and matches): not past its `expires_at`. */
const UNEXPIRED = `(w.expires_at IS NULL OR w.expires_at > now())`;

/** The per-statement gate; with `watches`, every event may be wanted while any watch exists. */
function wantedEventIds(watches: boolean): string {
  return `
    CREATE OR REPLACE FUNCTION catalog_wanted_event_ids() RETURNS numeric[] LANGUAGE sql STABLE AS $$
      SELECT CASE
        WHEN coalesce(current_setting('bff.catalog_backfill', true), '') = 'on' THEN '{}'::numeric[]
        WHEN EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.enabled AND cardinality(e.event_ids) = 0
                       AND e.event_types && ${CATALOG_TYPES}) THEN NULL
        ${watches ? 'WHEN EXISTS (SELECT 1 FROM watches) THEN NULL' : ''}
        ELSE coalesce((SELECT array_agg(DISTINCT x) FROM webhook_endpoints e, unnest(e.event_ids) x
                       WHERE e.enabled AND cardinality(e.event_ids) > 0), '{}'::numeric[]) END
    $$`;
}

/** The clients a change goes to: by an endpoint's filters, and with `watches` by an unexpired watch on its event. */
function subscribers(watches: boolean): string {
  return `
    CREATE OR REPLACE FUNCTION catalog_subscribers(p_type text, p_event_id numeric) RETURNS SETOF uuid
    LANGUAGE sql STABLE AS $$
      SELECT ${watches ? '' : 'DISTINCT '}e.client_id FROM webhook_endpoints e
      WHERE e.enabled AND catalog_endpoint_wants(e.event_types, e.event_ids, p_type, p_event_id)
      ${watches ? `UNION SELECT w.client_id FROM watches w WHERE w.event_id = p_event_id AND ${UNEXPIRED}` : ''}
    $$`;
}

/** A backfill's end, to the operators and each client with a catalog subscription (with `watches`: or a watch). */
function backfillCompleted(watches: boolean): string {
  return `
    CREATE OR REPLACE FUNCTION catalog_backfill_completed(p_data jsonb) RETURNS void LANGUAGE sql AS $$
      SELECT outbox_append(outbox_event_id(), 'sync.backfill_completed', 1::smallint, NULL, p_data);
      SELECT outbox_append(outbox_event_id(), 'sync.backfill_completed', 1::smallint, c.client_id, p_data)
      FROM (SELECT ${watches ? '' : 'DISTINCT '}e.client_id FROM webhook_endpoints e WHERE e.enabled
              AND (cardinality(e.event_ids) > 0 OR e.event_types && ${CATALOG_TYPES})
            ${watches ? `UNION SELECT w.client_id FROM watches w WHERE ${UNEXPIRED}` : ''}) c;
    $$`;
}

/**
 * A watch subscribes its client's feed to its event's catalog events (issue 32 item 2: "catalog events reach a
 * client's feed only for events it subscribed to (an endpoint filter or a watch)"; docs/webhooks.md "Catalog
 * events"). The two hooks …-CreateCatalogEvents.ts left for another subscription kind take the watches in:
 *
 * - `catalog_subscribers(type, event_id)`: also the clients with an unexpired watch on the event. Such a client gets
 *   the event in its feed; its endpoints get it only when their own filters take it (`catalog_endpoint_wants`,
 *   unchanged), so a watch alone adds nothing to any endpoint.
 * - `catalog_wanted_event_ids()` (the per-statement gate): NULL ("every event may be wanted") while any watch exists
 *   outside a backfill. Listing the watched events here instead would cost a scan of `watches` per statement
 *   (40–60 ms at 100,000 watches over 5,000 events, a loose index scan no better); the gate stays O(1) and
 *   `catalog_subscribers`, one index probe of `watches_event_price_idx` per changed row, drops the rows of events
 *   nobody follows. Expired watches pass the gate and are excluded there. A backfill still announces nothing.
 * - `catalog_backfill_completed`: the clients with an unexpired watch are told of a backfill too (their feed missed
 *   its per-listing changes, like an endpoint subscriber's).
 *
 * The watch match itself (`watch.matched`) is unchanged.
 */
export class CatalogSubscriptionByWatch1795850117314 implements MigrationInterface {
  name = 'CatalogSubscriptionByWatch1795850117314';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const sql of [wantedEventIds(true), subscribers(true), backfillCompleted(true)])
      await queryRunner.query(sql);
  }

  /** …-CreateCatalogEvents.ts's bodies: endpoints only. */
  async down(queryRunner: QueryRunner): Promise<void> {
    for (const sql of [wantedEventIds(false), subscribers(false), backfillCompleted(false)])
      await queryRunner.query(sql);
  }
}
