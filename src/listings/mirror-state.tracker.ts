import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import type { MirrorState } from '../catalog-sync/catalog-mirror.types';

/**
 * This replica's view of the mirror state (generation, last completed passes, protocol config): read
 * at startup, re-read on every `mirror_generation` notification and every `refreshMs` (a pass that
 * completes without changing a row bumps nothing but moves `data_as_of`). Reads never overlap; a
 * notification arriving during a read triggers one more read, so the last commit is never missed. The table
 * and the notification channel (`mirror_generation`) are catalog-sync's, the mirror's one owner: this tracker
 * only asks CatalogMirrorService (readState, readGenerationKey, watchGeneration) and names no table in SQL.
 */
/** Injection token of the tracker's refresh interval (ReadApiSettings.stateRefreshMs). */
export const MIRROR_STATE_REFRESH_MS = 'MIRROR_STATE_REFRESH_MS';

@Injectable()
export class MirrorStateTracker {
  private readonly logger = new Logger(MirrorStateTracker.name);
  private state: MirrorState | null = null;
  private reading: Promise<MirrorState> | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly mirror: CatalogMirrorService,
    @Inject(MIRROR_STATE_REFRESH_MS) private readonly refreshMs: number,
  ) {}

  /**
   * Never fails the service's start: an unreadable mirror (e.g. migrations not applied yet) is retried
   * every `refreshMs`, and answers are 503 until a state has been read.
   */
  async start(): Promise<void> {
    await this.refresh().catch(() => undefined);
    await this.mirror.watchGeneration(() => void this.refresh().catch(() => undefined), this.refreshMs);
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The last state read (start() has read one before the first request). */
  get current(): MirrorState {
    if (!this.state)
      throw new AppError('SERVICE_UNAVAILABLE', 'The catalog mirror is not readable yet', undefined, 1);
    return this.state;
  }

  /** Re-reads the state now (coalescing concurrent calls into at most one more read). */
  refresh(): Promise<MirrorState> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = (async () => {
      try {
        do {
          this.again = false;
          // Reads never overlap, so each one saw the database at or after the one before: it is the state, even
          // when its generation is lower (a restore or failover went back) — a cache that only moved forward would
          // serve the old history's bodies until the generation passed its old value.
          this.state = await this.mirror.readState();
        } while (this.again);
        return this.current;
      } catch (error) {
        this.logger.warn(`mirror state not refreshed: ${(error as Error).message}`);
        throw error;
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  /** Strict mode: the generation (and epoch) read from the database now; re-reads the state when it changed. */
  async verified(): Promise<MirrorState> {
    const key = await this.mirror.readGenerationKey();
    if (this.state && key === this.state.generationKey) return this.state;
    return this.refresh();
  }
}
