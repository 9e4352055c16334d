import { percentile } from '../chaos/orders-client';

/** One change the market really made upstream (a confirmed transaction or a 201 from the sandbox admin). */
export interface MarketChange {
  /** `removed`: a confirmed purchase or cancel; `added`: a new listing or the relist of a reprice. */
  effect: 'removed' | 'added';
  eventId: string;
  ticketId: string;
  priceMinor: string;
  /** When it took effect upstream (ms, the sandbox's clock = this machine's wall clock). */
  atMs: number;
}

/** One complete browse of one event through the service under test, and the upstream right after it. */
export interface BrowseSample {
  eventId: string;
  cold: boolean;
  /** Before the first page was asked for. */
  startMs: number;
  /** After the last page arrived. */
  endMs: number;
  /** ticket id → price (minor) as served. */
  served: Map<string, string>;
  /** ticket id → price (minor) active upstream, read right after endMs. */
  truth: Map<string, string>;
  /** The oldest `data_as_of` the browse's pages carried (ms; null when none had one). */
  dataAsOfMs?: number | null;
}

export interface SampleScore {
  served: number;
  accurate: number;
  /** Active upstream, listed at or before the browse started, not served. */
  missing: number;
  /** What the browse should have served: truth minus what was added after it started. */
  expected: number;
}

const key = (ticketId: string, priceMinor: string): string => `${ticketId}|${priceMinor}`;

/** The changes of each event, in time order. */
export function changesByEvent(changes: readonly MarketChange[]): Map<string, MarketChange[]> {
  const byEvent = new Map<string, MarketChange[]>();
  for (const change of changes) {
    const list = byEvent.get(change.eventId) ?? [];
    list.push(change);
    byEvent.set(change.eventId, list);
  }
  for (const list of byEvent.values()) list.sort((a, b) => a.atMs - b.atMs);
  return byEvent;
}

/**
 * A served listing (ticket, price) is accurate when it was active upstream at that price at some instant of
 * the browse: it is active in the truth read right after the browse, or a change logged after the browse
 * started removed it (the listing was live when the read began, so serving it is not the mirror's fault).
 * Missing: active in the truth, not served, and not added after the browse started.
 */
export function scoreSample(sample: BrowseSample, eventChanges: readonly MarketChange[]): SampleScore {
  const removedAfterStart = new Set<string>();
  const addedAfterStart = new Set<string>();
  for (const change of eventChanges) {
    if (change.atMs <= sample.startMs) continue;
    (change.effect === 'removed' ? removedAfterStart : addedAfterStart).add(
      key(change.ticketId, change.priceMinor),
    );
  }
  let accurate = 0;
  for (const [ticketId, price] of sample.served) {
    if (sample.truth.get(ticketId) === price || removedAfterStart.has(key(ticketId, price))) accurate++;
  }
  let missing = 0;
  let expected = 0;
  for (const [ticketId, price] of sample.truth) {
    if (addedAfterStart.has(key(ticketId, price))) continue;
    expected++;
    if (sample.served.get(ticketId) !== price) missing++;
  }
  return { served: sample.served.size, accurate, missing, expected };
}

/** Why a sample served what it did: each wrong (ticket, price) with how long before the browse it was removed. */
export interface SampleDiagnosis {
  /** startMs − data_as_of: how old the event's data was when the browse began (NaN when unknown). */
  dataAgeMs: number;
  /** Per wrong listing: ms from its logged removal to the browse's start (NaN: no removal logged for it). */
  wrongRemovedBeforeMs: number[];
}

/** The wrong listings of one sample and how long before the browse each was removed (for the report). */
export function diagnoseSample(sample: BrowseSample, eventChanges: readonly MarketChange[]): SampleDiagnosis {
  const removedAt = new Map<string, number>();
  for (const change of eventChanges)
    if (change.effect === 'removed') removedAt.set(key(change.ticketId, change.priceMinor), change.atMs);
  const wrongRemovedBeforeMs: number[] = [];
  for (const [ticketId, price] of sample.served) {
    const at = removedAt.get(key(ticketId, price));
    if (sample.truth.get(ticketId) === price || (at !== undefined && at > sample.startMs)) continue;
    wrongRemovedBeforeMs.push(at === undefined ? Number.NaN : sample.startMs - at);
  }
  return {
    dataAgeMs:
      sample.dataAsOfMs === null || sample.dataAsOfMs === undefined
        ? Number.NaN
        : sample.startMs - sample.dataAsOfMs,
    wrongRemovedBeforeMs: wrongRemovedBeforeMs.sort((a, b) => a - b),
  };
}

export interface Latencies {
  /** ms from the change to the end of the first browse (started after it) that shows it. */
  values: number[];
  /**
   * The same changes' lower bounds: ms from the change to the end of the last browse started after it that
   * still did not show it (0 when the first one did). The true latency lies between the two; their gap is the
   * reader's revisit interval of the event.
   */
  lower: number[];
  /** Changes no browse started after them showed before the run ended. */
  never: number;
}

/**
 * Removal → the first browse of its event that started after the removal and no longer serves the listing at
 * that price; new listing → the first browse that started after it and serves it. The latency is that browse's
 * end minus the change: what a reader waited at most. Samples must be of the change's event, by start time.
 */
export function changeLatencies(
  changes: readonly MarketChange[],
  samplesByEvent: ReadonlyMap<string, readonly BrowseSample[]>,
  effect: MarketChange['effect'],
): Latencies {
  const values: number[] = [];
  const lower: number[] = [];
  let never = 0;
  for (const change of changes) {
    if (change.effect !== effect) continue;
    const samples = (samplesByEvent.get(change.eventId) ?? []).filter((s) => s.startMs >= change.atMs);
    const shows = (s: BrowseSample): boolean =>
      effect === 'removed'
        ? s.served.get(change.ticketId) !== change.priceMinor
        : s.served.get(change.ticketId) === change.priceMinor;
    const first = samples.findIndex(shows);
    if (first < 0) {
      never++;
      continue;
    }
    values.push(samples[first].endMs - change.atMs);
    lower.push(first === 0 ? 0 : samples[first - 1].endMs - change.atMs);
  }
  return { values, lower, never };
}

/**
 * Percentile with the never-shown changes counted as infinitely late (a p90 is finite only when at least 90 %
 * were shown).
 */
export function latencyPercentile(latencies: Latencies, p: number): number {
  return percentile([...latencies.values, ...Array<number>(latencies.never).fill(Infinity)], p);
}

/** Upstream requests per second from successive readings of a cumulative counter (time ms, count). */
export function perSecondRates(readings: readonly { atMs: number; count: number }[]): number[] {
  const rates: number[] = [];
  for (let i = 1; i < readings.length; i++) {
    const seconds = (readings[i].atMs - readings[i - 1].atMs) / 1000;
    if (seconds > 0) rates.push((readings[i].count - readings[i - 1].count) / seconds);
  }
  return rates;
}
