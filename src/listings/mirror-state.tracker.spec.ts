import { describe, expect, it } from 'vitest';
import type { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import { toMirrorState } from '../catalog-sync/catalog-mirror.state';
import type { MirrorState } from '../catalog-sync/catalog-mirror.types';
import { MirrorStateTracker } from './mirror-state.tracker';

/** A mirror whose state the test sets: what the database holds now (epoch = its server's start). */
function fakeMirror() {
  const db = { epoch: 'start-1', generation: 0 };
  const read = (): MirrorState =>
    toMirrorState({
      generation: String(db.generation),
      epoch: db.epoch,
      events_pass: null,
      listings_pass: null,
      protocol: null,
      event_walks: null,
    });
  const mirror = {
    readState: () => Promise.resolve(read()),
    readGenerationKey: () => Promise.resolve(read().generationKey),
  } as unknown as CatalogMirrorService;
  return { db, mirror };
}

describe(MirrorStateTracker.name, () => {
  it('follows the database back when a restore or failover lowered the generation (any change, not only up)', async () => {
    const { db, mirror } = fakeMirror();
    const sut = new MirrorStateTracker(mirror, 60_000);
    db.generation = 100;
    await sut.refresh();
    const before = sut.current.version;
    // Restored from a backup taken at generation 90, on another server.
    db.epoch = 'start-2';
    db.generation = 90;
    await sut.refresh();
    expect(sut.current.generation).toBe(90n);
    expect(sut.current.version).not.toBe(before);
    // Ten syncs later the number is back at 100: still another history, another cache version.
    db.generation = 100;
    await sut.refresh();
    expect(sut.current.version).not.toBe(before);
  });

  it('strict mode re-reads when the epoch changed even at the same generation number', async () => {
    const { db, mirror } = fakeMirror();
    const sut = new MirrorStateTracker(mirror, 60_000);
    db.generation = 7;
    await sut.refresh();
    expect((await sut.verified()).generationKey).toBe('start-1/7');
    db.epoch = 'start-2';
    expect((await sut.verified()).generationKey).toBe('start-2/7');
  });
});
