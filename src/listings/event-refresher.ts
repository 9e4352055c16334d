/**
 * The seam to catalog sync: refresh one event's listings in the mirror after a confirmed sale action.
 * Bound to CatalogSyncService.refreshEvent in listings.module.ts: it answers with the finished pass (`completed`,
 * `failed` or `cancelled`) and throws when that event's refresh is already running.
 */
export interface EventRefresher {
  refreshEvent(eventId: bigint): Promise<{ status: string; error: string | null }>;
}

export const EVENT_REFRESHER = Symbol('EVENT_REFRESHER');
