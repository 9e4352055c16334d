/**
 * The seam to catalog sync: refresh one event's listings in the mirror after a confirmed sale action.
 * Bound to CatalogSyncService.refreshEvent in listings.module.ts.
 */
export interface EventRefresher {
  refreshEvent(eventId: bigint): Promise<unknown>;
}

export const EVENT_REFRESHER = Symbol('EVENT_REFRESHER');
