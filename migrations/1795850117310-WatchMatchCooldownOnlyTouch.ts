import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The watch match stops updating `watches.last_alerted_at` for a watch without a cooldown (issue 32, docs/watches.md
 * "Matching", docs/BENCHMARKS.md "Session 18: watches cost"). Same triggers, same match, same payloads, same feed
 * order as …-WatchMatchSetBased.ts; one change:
 *
 * - `last_alerted_at` is what the cooldown reads, and only a watch with a cooldown reads it. Every alert updated its
 *   watch's row all the same: a dense pass (10,000 price drops matching 100,000 watches) rewrote 100,000 watch rows
 *   (HOT, but a new row version, its WAL, and the page pruning the next match's scan of `watches` paid for). Now the
 *   update runs only when the statement picked a watch with a cooldown (an uncorrelated EXISTS over `picked`, planned
 *   as a one-time filter: when false the update reads nothing), and then only the alerted watches that have one.
 *
 * What the API shows as a watch's `last_alerted_at` is read from `watch_alerts` (the latest `alerted_at` of the
 * watch, src/watches/watch.repository.ts): the same instant (`now()` of the alerting transaction in both), for every
 * watch, with or without a cooldown. The column keeps a stale value on watches without a cooldown that alerted before
 * this migration; nothing reads it there.
 *
 * The function bodies replaced are …-WatchMatchSetBased.ts's; `down` puts them back (the update for every alert).
 */
const INSERTED = `
  SELECT n.event_id, n.ticket_id, n.ask_price_minor AS price, NULL::numeric AS previous, false AS was_active
  FROM pg_temp.listings_inserted n`;

const UPDATED = `
  SELECT n.event_id, n.ticket_id, n.ask_price_minor AS price,
    CASE WHEN o.removed_at IS NULL THEN o.ask_price_minor END AS previous, o.removed_at IS NULL AS was_active
  FROM n JOIN o ON o.event_id = n.event_id AND o.ticket_id = n.ticket_id
  WHERE n.removed_at IS NULL AND (o.removed_at IS NOT NULL OR n.ask_price_minor < o.ask_price_minor)`;

const MONEY = (minor: string) => `watch_money(${minor}, pc.stablecoin_decimals, pc.stablecoin_mint)`;

/** Which alerted watches get `last_alerted_at`: those with a cooldown (up), or all of them (down, as before). */
function touched(cooldownOnly: boolean): string {
  return cooldownOnly
    ? `
    touched AS (
      UPDATE watches w SET last_alerted_at = now()
      FROM (SELECT DISTINCT watch_id FROM alerted) a
      WHERE w.id = a.watch_id AND w.cooldown_seconds IS NOT NULL
        AND EXISTS (SELECT 1 FROM picked WHERE cooldown_seconds IS NOT NULL)
    )`
    : `
    touched AS (
      UPDATE watches w SET last_alerted_at = now()
      FROM (SELECT DISTINCT watch_id FROM alerted) a
      WHERE w.id = a.watch_id
    )`;
}

/**
 * The set-based match of …-WatchMatchSetBased.ts (see there for why each part is shaped as it is): the changed rows'
 * JSON once per row, the candidates, the cheapest of a batch for a cooldown watch, the alerts recorded (only new
 * rows go on), and every announced match in one outbox_append_set call, in (event, ticket, watch) order.
 */
function announceSet(changed: string, cooldownOnly: boolean): string {
  return `
    WITH pc AS (SELECT stablecoin_decimals, stablecoin_mint FROM protocol_config LIMIT 1),
    changed AS MATERIALIZED (
      SELECT c.*, jsonb_build_object('event_id', c.event_id::text, 'ticket_id', c.ticket_id::text,
          'price', ${MONEY('c.price')}) AS listing, ${MONEY('c.previous')} AS previous_price
      FROM (${changed}) c LEFT JOIN pc ON true),
    candidates AS (
      SELECT w.id AS watch_id, w.client_id, w.subject, w.cooldown_seconds, c.event_id, c.ticket_id, c.price,
        c.previous, c.listing, c.previous_price,
        CASE
          WHEN NOT c.was_active THEN CASE WHEN c.price <= w.max_price_minor THEN 'listed_under_max' END
          WHEN w.min_drop_percent IS NOT NULL
            AND (c.previous - c.price) * 100 >= c.previous * w.min_drop_percent THEN 'price_drop'
          WHEN c.price <= w.max_price_minor AND c.previous > w.max_price_minor THEN 'dropped_under_max'
        END AS reason
      FROM changed c
      JOIN watches w ON w.event_id = c.event_id AND (w.max_price_minor IS NULL OR w.max_price_minor >= c.price)
      WHERE (w.expires_at IS NULL OR w.expires_at > now())
        AND (w.cooldown_seconds IS NULL OR w.last_alerted_at IS NULL
             OR w.last_alerted_at + make_interval(secs => w.cooldown_seconds) <= now())
    ),
    picked AS (
      SELECT cd.*, 1::bigint AS rank FROM candidates cd WHERE cd.reason IS NOT NULL AND cd.cooldown_seconds IS NULL
      UNION ALL
      SELECT * FROM (
        SELECT cd.*, row_number() OVER (PARTITION BY cd.watch_id ORDER BY cd.price, cd.ticket_id) AS rank
        FROM candidates cd WHERE cd.reason IS NOT NULL AND cd.cooldown_seconds IS NOT NULL) r
      WHERE r.rank = 1
    ),
    alerted AS (
      INSERT INTO watch_alerts (watch_id, event_id, ticket_id, price_minor)
      SELECT watch_id, event_id, ticket_id, price FROM picked
      ON CONFLICT DO NOTHING
      RETURNING watch_id, event_id, ticket_id
    ),${touched(cooldownOnly)},
    announced AS (
      SELECT u.watch_id, u.event_id, u.ticket_id,
        (array_agg(u.client_id) FILTER (WHERE NOT u.recorded))[1] AS client_id,
        (array_agg(u.data) FILTER (WHERE NOT u.recorded))[1] AS data
      FROM (
        SELECT watch_id, event_id, ticket_id, true AS recorded, NULL::uuid AS client_id, NULL::jsonb AS data
        FROM alerted
        UNION ALL
        SELECT p.watch_id, p.event_id, p.ticket_id, false, p.client_id, jsonb_build_object(
          'watch_id', p.watch_id, 'subject', p.subject, 'listing', p.listing,
          'previous_price', p.previous_price, 'reason', p.reason)
        FROM picked p) u
      GROUP BY u.watch_id, u.event_id, u.ticket_id
      HAVING bool_or(u.recorded)
    )
    SELECT outbox_append_set('watch.matched', 1::smallint,
      array_agg(client_id ORDER BY event_id, ticket_id, watch_id),
      array_agg(data ORDER BY event_id, ticket_id, watch_id))
    INTO announced_count
    FROM announced`;
}

function matchFunction(name: string, statement: string): string {
  return `
    CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      announced_count bigint;
    BEGIN
      -- No watch at all (the common case): nothing to join.
      IF NOT EXISTS (SELECT 1 FROM watches) THEN RETURN NULL; END IF;
      ${statement};
      RETURN NULL;
    END $$`;
}

export class WatchMatchCooldownOnlyTouch1795850117310 implements MigrationInterface {
  name = 'WatchMatchCooldownOnlyTouch1795850117310';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(matchFunction('watches_match_updated_listings', announceSet(UPDATED, true)));
    await queryRunner.query(matchFunction('watches_match_collected_listings', announceSet(INSERTED, true)));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(matchFunction('watches_match_updated_listings', announceSet(UPDATED, false)));
    await queryRunner.query(matchFunction('watches_match_collected_listings', announceSet(INSERTED, false)));
  }
}
