import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The watch match stops updating `watches.last_alerted_at` for a watch without a cooldown (issue 32, docs/watches.md
 * "Matching", docs/BENCHMARKS.md "Session 18: watches cost"). Same triggers, same match, same payloads, same feed
 * order as …-WatchMatchSetBased.ts; two changes:
 *
 * - `last_alerted_at` is what the cooldown reads, and only a watch with a cooldown reads it. Every alert updated its
 *   watch's row all the same: a dense pass (10,000 price drops matching 100,000 watches) rewrote 100,000 watch rows
 *   (HOT, but a new row version, its WAL, and the page pruning the next match's scan of `watches` paid for). Now the
 *   update runs only when the statement picked a watch with a cooldown (an uncorrelated EXISTS over `picked`, planned
 *   as a one-time filter: when false the update reads nothing), and then only the alerted watches that have one;
 * - a changed row's prices are formatted by an expression (`moneyInline`) instead of two calls of `watch_money`.
 *
 * What the API shows as a watch's `last_alerted_at` is read from `watch_alerts` (the latest `alerted_at` of the
 * watch, src/watches/watch.repository.ts): the same instant (`now()` of the alerting transaction in both), for every
 * watch, with or without a cooldown. The column keeps a stale value on watches without a cooldown that alerted before
 * this migration; nothing reads it there.
 *
 * The function bodies replaced are …-WatchMatchSetBased.ts's; `down` puts them back (the update for every alert,
 * `watch_money` calls).
 */
const INSERTED = `
  SELECT n.event_id, n.ticket_id, n.ask_price_minor AS price, NULL::numeric AS previous, false AS was_active
  FROM pg_temp.listings_inserted n`;

const UPDATED = `
  SELECT n.event_id, n.ticket_id, n.ask_price_minor AS price,
    CASE WHEN o.removed_at IS NULL THEN o.ask_price_minor END AS previous, o.removed_at IS NULL AS was_active
  FROM n JOIN o ON o.event_id = n.event_id AND o.ticket_id = n.ticket_id
  WHERE n.removed_at IS NULL AND (o.removed_at IS NOT NULL OR n.ask_price_minor < o.ask_price_minor)`;

/** As before this migration: the money JSON by a call of `watch_money` (…-CreateWatchMatchTriggers.ts). */
const MONEY_CALL = (minor: string) => `watch_money(${minor}, pc.stablecoin_decimals, pc.stablecoin_mint)`;

const UNFORMATTED_REASON =
  'protocol config not fetched from the upstream yet: stablecoin_decimals unknown, amount not formatted';

/**
 * `watch_money(minor, pc.stablecoin_decimals, pc.stablecoin_mint)` written out: the same JSON. The function cannot be
 * inlined by the planner (its body has a subquery), so every call started a small executor of its own, about 20 µs
 * (100,000 calls: 2.0 s against 0.7 s for the expression, same machine) — two per changed row.
 */
function moneyInline(minor: string): string {
  const d = 'pc.stablecoin_decimals';
  const padded = `lpad(${minor}::text, greatest(length(${minor}::text), ${d} + 1), '0')`;
  const fraction = `rtrim(right(${padded}, ${d}), '0')`;
  return `CASE
    WHEN ${minor} IS NULL THEN NULL
    WHEN ${d} IS NULL THEN jsonb_build_object('minor', ${minor}::text, 'unformatted_reason', '${UNFORMATTED_REASON}')
    ELSE jsonb_build_object('minor', ${minor}::text, 'decimals', ${d}, 'currency_mint', pc.stablecoin_mint,
      'amount', CASE
        WHEN ${d} = 0 THEN ${minor}::text
        ELSE left(${padded}, length(${padded}) - ${d})
          || CASE WHEN ${fraction} = '' THEN '' ELSE '.' || ${fraction} END
      END)
  END`;
}

/** Which alerted watches get `last_alerted_at`: those with a cooldown (`up`), or all of them (down, as before). */
function touched(up: boolean): string {
  return up
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
function announceSet(changed: string, up: boolean): string {
  const MONEY = up ? moneyInline : MONEY_CALL;
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
    ),${touched(up)},
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
