/** A rendered answer: the exact body bytes and their strong validator. */
export interface RenderedBody {
  body: string;
  etag: string;
}

// Per-entry bookkeeping beyond the two strings (Map slot, object headers), so many tiny entries still count.
const ENTRY_OVERHEAD_BYTES = 96;

/**
 * The read API's exact response cache: rendered bodies keyed by (query, mirror state version). An entry
 * can only be found under the state it was rendered from; when the state moves on (a sync commit, a
 * completed pass, a new protocol config) every entry is dropped at once, so nothing is served past a
 * commit. Bounded by bytes (UTF-16 size of key and body): least recently used entries go first.
 * `maxBytes` 0 disables it.
 */
export class ResponseCache {
  private readonly entries = new Map<string, RenderedBody & { bytes: number }>();
  private bytes = 0;
  private version: string | null = null;
  hits = 0;
  misses = 0;

  constructor(readonly maxBytes: number) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  get size(): number {
    return this.entries.size;
  }

  get usedBytes(): number {
    return this.bytes;
  }

  /** The entry of `key` rendered under state `version`, or undefined. */
  get(version: string, key: string): RenderedBody | undefined {
    if (!this.enabled || version !== this.version) {
      this.misses++;
      return undefined;
    }
    const entry = this.entries.get(key);
    if (!entry) {
      this.misses++;
      return undefined;
    }
    // Refresh recency: Map iteration order is insertion order, the first key is the least recently used.
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.hits++;
    return entry;
  }

  /** Stores an answer rendered under state `version` (dropping everything of older versions first). */
  set(version: string, key: string, value: RenderedBody): void {
    if (!this.enabled) return;
    if (version !== this.version) this.clear(version);
    const bytes = 2 * (key.length + value.body.length + value.etag.length) + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.maxBytes) return;
    const previous = this.entries.get(key);
    if (previous) {
      this.entries.delete(key);
      this.bytes -= previous.bytes;
    }
    while (this.bytes + bytes > this.maxBytes) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      const evicted = this.entries.get(oldest.value);
      this.entries.delete(oldest.value);
      this.bytes -= evicted?.bytes ?? 0;
    }
    this.entries.set(key, { ...value, bytes });
    this.bytes += bytes;
  }

  clear(version: string | null = null): void {
    this.entries.clear();
    this.bytes = 0;
    this.version = version;
  }
}
