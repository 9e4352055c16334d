import type { EventAsOf, MirrorState, MirrorStateRow } from './catalog-mirror.types';

const date = (text: string | undefined): Date | null => (text === undefined ? null : new Date(text));

/** The state query's row as a MirrorState (pure). */
export function toMirrorState(row: MirrorStateRow): MirrorState {
  const protocol = row.protocol
    ? {
        stablecoinDecimals: row.protocol.decimals,
        stablecoinMint: row.protocol.mint,
        fetchedAt: new Date(row.protocol.fetched_at),
      }
    : null;
  const generation = BigInt(row.generation ?? '0');
  const generationKey = `${row.epoch}/${generation}`;
  const eventsAsOf = date(row.events_pass?.started_at);
  const listingsAsOf = date(row.listings_pass?.started_at);
  const eventAsOf = new Map<string, EventAsOf>();
  for (const [eventId, at] of Object.entries(row.event_walks ?? {})) {
    const instant = new Date(at);
    if (listingsAsOf === null || instant > listingsAsOf) {
      eventAsOf.set(eventId, { ms: instant.getTime(), iso: instant.toISOString() });
    }
  }
  return {
    generation,
    generationKey,
    eventsAsOf,
    listingsAsOf,
    eventsAsOfIso: eventsAsOf?.toISOString() ?? null,
    listingsAsOfIso: listingsAsOf?.toISOString() ?? null,
    protocol,
    eventAsOf,
    version: [
      generationKey,
      row.events_pass?.id ?? '-',
      row.listings_pass?.id ?? '-',
      row.protocol ? `${row.protocol.decimals}/${row.protocol.mint ?? ''}/${row.protocol.fetched_at}` : '-',
    ].join(':'),
  };
}
