/** The `queue` label of sync leases in the durable-work metrics (durable_work_*_total{queue="sync"}). */
export const SYNC_LEASE_QUEUE = 'sync';

/** The job's lease name: one per resource, one per event for event refreshes. */
export function leaseName(
  resource: 'events' | 'listings' | 'event_listings',
  eventId: bigint | null,
): string {
  return resource === 'event_listings' ? `sync:event:${eventId}` : `sync:${resource}`;
}
