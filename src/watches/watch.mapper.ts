import type { WatchRow } from './watch.repository';

/** A watch as its owner sees it (u64 values as decimal strings, times in ISO 8601). */
export interface WatchView {
  id: string;
  event_id: string;
  /** The name search it was created with (resolved to `event_id` then), or null. */
  q: string | null;
  max_price_minor: string | null;
  min_drop_percent: number | null;
  subject: string | null;
  cooldown_seconds: number | null;
  expires_at: string | null;
  /** Past `expires_at` (database clock): it matches nothing any more. */
  expired: boolean;
  last_alerted_at: string | null;
  created_at: string;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function toWatchView(row: WatchRow): WatchView {
  return {
    id: row.id,
    event_id: row.event_id,
    q: row.query,
    max_price_minor: row.max_price_minor,
    min_drop_percent: row.min_drop_percent,
    subject: row.subject,
    cooldown_seconds: row.cooldown_seconds,
    expires_at: iso(row.expires_at),
    expired: row.expired,
    last_alerted_at: iso(row.last_alerted_at),
    created_at: row.created_at.toISOString(),
  };
}
