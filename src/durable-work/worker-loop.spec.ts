import { Logger } from '@nestjs/common';
import { describe, expect, it, vi } from 'vitest';
import { DatabaseBusyError } from '../database/pool-gate';
import { waitUntil } from '../../test/support/wait';
import { WorkerLoop } from './worker-loop';

/** A promise and its resolver (an item held in progress until the test lets it finish). */
function gate(): { promise: Promise<void>; open: () => void } {
  const g = {} as { promise: Promise<void>; open: () => void };
  g.promise = new Promise<void>((resolve) => {
    g.open = resolve;
  });
  return g;
}

function setup(
  concurrency: number,
  available: number,
  extra: { refill?: boolean; firstDelayMs?: number } = {},
) {
  let left = available;
  const asked: number[] = [];
  const gates: ReturnType<typeof gate>[] = [];
  const sut = new WorkerLoop<number>(
    {
      name: 'test',
      intervalMs: 60_000,
      ...extra,
      concurrency,
      claim: (room) => {
        asked.push(room);
        const n = Math.min(room, left);
        left -= n;
        return Promise.resolve(Array.from({ length: n }, (_, i) => i));
      },
      work: () => {
        const g = gate();
        gates.push(g);
        return g.promise;
      },
    },
    new Logger('test'),
  );
  return { sut, asked, gates };
}

describe(WorkerLoop.name, () => {
  it('claims only the room left under its concurrency, and none while full', async () => {
    const { sut, asked, gates } = setup(3, 10);
    expect(await sut.tick()).toBe(3);
    expect(sut.active).toBe(3);
    expect(await sut.tick()).toBe(0);
    gates[0].open();
    await gates[0].promise;
    await new Promise((r) => setImmediate(r));
    expect(sut.active).toBe(2);
    expect(await sut.tick()).toBe(1);
    expect(asked).toEqual([3, 1]);
    for (const g of gates) g.open();
    await sut.stop();
  });

  it('stop() waits for every item in progress, then claims nothing more', async () => {
    const { sut, gates } = setup(2, 10);
    await sut.tick();
    let stopped = false;
    const stopping = sut.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    for (const g of gates) g.open();
    await stopping;
    expect(sut.active).toBe(0);
    expect(await sut.tick()).toBe(0);
  });

  it('stopClaiming() (the drain) ends passes and wake-ups; the items in progress go on and stop() awaits them', async () => {
    const { sut, asked, gates } = setup(3, 10);
    expect(await sut.tick()).toBe(3);
    sut.stopClaiming();
    expect(sut.claiming).toBe(false);
    expect(await sut.tick()).toBe(0);
    const woken = vi.fn<() => Promise<number | null>>(() => Promise.resolve(99));
    sut.wake(woken);
    expect(woken).not.toHaveBeenCalled();
    expect(asked).toEqual([3]);
    // Held items are not cut short: still in progress, and stop() waits for each.
    expect(sut.active).toBe(3);
    let stopped = false;
    const stopping = sut.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    for (const g of gates) g.open();
    await stopping;
    expect(sut.active).toBe(0);
  });

  it('after stopClaiming() its timer runs no further pass, and start() does not bring it back', async () => {
    vi.useFakeTimers();
    try {
      let passes = 0;
      const sut = new WorkerLoop<number>(
        {
          name: 'drained',
          intervalMs: 100,
          firstDelayMs: 0,
          concurrency: 1,
          claim: () => {
            passes++;
            return Promise.resolve([]);
          },
          work: () => Promise.resolve(),
        },
        new Logger('test'),
      );
      sut.start();
      await vi.advanceTimersByTimeAsync(250);
      expect(passes).toBe(3);
      sut.stopClaiming();
      sut.start();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(passes).toBe(3);
      await sut.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('wake() claims one item off the timer and works it as one of its items', async () => {
    const { sut, gates } = setup(2, 0);
    const claimed: string[] = [];
    sut.wake(() => {
      claimed.push('woken');
      return Promise.resolve(7);
    });
    sut.wake(() => Promise.resolve(null));
    await new Promise((r) => setImmediate(r));
    expect(claimed).toEqual(['woken']);
    expect(gates).toHaveLength(1);
    expect(sut.active).toBe(1);
    gates[0].open();
    await sut.stop();
    expect(sut.active).toBe(0);
  });

  it('wake() respects the concurrency: a full loop claims nothing off the timer, and a pass then gets no room', async () => {
    const { sut, asked, gates } = setup(2, 5);
    let wakeClaims = 0;
    const wakeClaim = () => {
      wakeClaims++;
      return Promise.resolve(9);
    };
    expect(sut.wake(wakeClaim)).toBe(true);
    expect(sut.wake(wakeClaim)).toBe(true);
    expect(sut.wake(wakeClaim)).toBe(false);
    await new Promise((r) => setImmediate(r));
    expect(wakeClaims).toBe(2);
    expect(sut.active).toBe(2);
    expect(await sut.tick()).toBe(0);
    expect(asked).toEqual([]);
    for (const g of gates) g.open();
    await waitUntil(() => sut.active === 0, 1_000, 5);
    expect(await sut.tick()).toBe(2);
    expect(asked).toEqual([2]);
    for (const g of gates) g.open();
    await sut.stop();
  });

  it('stop() aborts the signal of a claim in progress, so a long claim can end itself', async () => {
    let seen: AbortSignal | undefined;
    const sut = new WorkerLoop<number>(
      {
        name: 'long-claim',
        intervalMs: 60_000,
        concurrency: 1,
        claim: (_room, stopping) => {
          seen = stopping;
          return new Promise<number[]>((resolve) =>
            stopping.addEventListener('abort', () => resolve([]), { once: true }),
          );
        },
        work: () => Promise.resolve(),
      },
      new Logger('test'),
    );
    sut.start();
    const pass = sut.tick();
    expect(seen?.aborted).toBe(false);
    await sut.stop();
    expect(seen?.aborted).toBe(true);
    expect(await pass).toBe(0);
  });

  it('an item that fails is logged and leaves its slot free; it never rejects the pass', async () => {
    const errors: unknown[] = [];
    const logger = new Logger('test');
    logger.error = (obj: unknown) => void errors.push(obj);
    const sut = new WorkerLoop<number>(
      {
        name: 'failing',
        intervalMs: 60_000,
        concurrency: 1,
        claim: () => Promise.resolve([1]),
        work: () => Promise.reject(new Error('boom')),
      },
      logger,
    );
    expect(await sut.tick()).toBe(1);
    await sut.stop();
    expect(sut.active).toBe(0);
    expect(errors).toHaveLength(1);
  });

  it('an item cut off by a database outage is a warning without a stack, not an error', async () => {
    const errors: unknown[] = [];
    const warnings: string[] = [];
    const logger = new Logger('test');
    logger.error = (obj: unknown) => void errors.push(obj);
    logger.warn = (_obj: unknown, msg?: unknown) => void warnings.push(String(msg));
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const sut = new WorkerLoop<number>(
      {
        name: 'outage',
        intervalMs: 60_000,
        concurrency: 1,
        claim: () => Promise.resolve([1]),
        work: () => Promise.reject(refused),
      },
      logger,
    );
    expect(await sut.tick()).toBe(1);
    await sut.stop();
    expect({ errors, warnings }).toEqual({
      errors: [],
      warnings: ['durable work item interrupted: database unavailable'],
    });
  });

  it('runs passes on its own timer after start(), the first after firstDelayMs', async () => {
    let passes = 0;
    const sut = new WorkerLoop<number>(
      {
        name: 'timed',
        intervalMs: 5,
        firstDelayMs: 0,
        concurrency: 1,
        claim: () => {
          passes++;
          return Promise.resolve([]);
        },
        work: () => Promise.resolve(),
      },
      new Logger('test'),
    );
    sut.start();
    await waitUntil(() => passes >= 3, 2_000, 5);
    await sut.stop();
    const after = passes;
    expect(after).toBeGreaterThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 30));
    expect(passes).toBe(after);
  });

  it('while the database is unavailable, says so once per interval instead of a stack trace per pass', async () => {
    vi.useFakeTimers();
    try {
      const warnings: string[] = [];
      const logger = new Logger('test');
      logger.warn = (_obj: unknown, msg?: unknown) => void warnings.push(String(msg));
      const sut = new WorkerLoop<number>(
        {
          name: 'db-down',
          intervalMs: 100,
          concurrency: 1,
          claim: () => Promise.reject(new DatabaseBusyError('connect ECONNREFUSED')),
          work: () => Promise.resolve(),
        },
        logger,
      );
      sut.start();
      await vi.advanceTimersByTimeAsync(1_050);
      expect(warnings).toEqual(['durable work paused: database unavailable']);
      await vi.advanceTimersByTimeAsync(10_000);
      expect(warnings).toHaveLength(2);
      await sut.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  describe('refill', () => {
    it('claims again as soon as an item ends, not an interval later', async () => {
      vi.useFakeTimers();
      try {
        const { sut, asked, gates } = setup(2, 10, { refill: true, firstDelayMs: 0 });
        sut.start();
        await vi.advanceTimersByTimeAsync(0);
        expect(asked).toEqual([2]);
        gates[0].open();
        // No time passes (the interval is 60 s): the ended item's room is claimed at once.
        await vi.advanceTimersByTimeAsync(0);
        expect(asked).toEqual([2, 1]);
        expect(sut.active).toBe(2);
        for (const g of gates) g.open();
        await sut.stop();
      } finally {
        vi.useRealTimers();
      }
    });

    it('without it, an ended item waits for the next pass of the timer', async () => {
      vi.useFakeTimers();
      try {
        const { sut, asked, gates } = setup(2, 10, { firstDelayMs: 0 });
        sut.start();
        await vi.advanceTimersByTimeAsync(0);
        gates[0].open();
        await vi.advanceTimersByTimeAsync(0);
        expect(asked).toEqual([2]);
        await vi.advanceTimersByTimeAsync(60_000);
        expect(asked).toEqual([2, 1]);
        for (const g of gates) g.open();
        await sut.stop();
      } finally {
        vi.useRealTimers();
      }
    });

    it('items ending during a pass make one more pass right after it, never two at once', async () => {
      vi.useFakeTimers();
      try {
        let running = 0;
        let overlapped = false;
        const claimGates: ReturnType<typeof gate>[] = [];
        const itemGates: ReturnType<typeof gate>[] = [];
        const asked: number[] = [];
        const sut = new WorkerLoop<number>(
          {
            name: 'refill',
            intervalMs: 60_000,
            firstDelayMs: 0,
            concurrency: 3,
            refill: true,
            claim: async (room) => {
              asked.push(room);
              overlapped ||= running > 0;
              running++;
              // The first pass returns at once; later ones wait until the test lets them finish.
              if (asked.length > 1) {
                const g = gate();
                claimGates.push(g);
                await g.promise;
              }
              running--;
              return Array.from({ length: room }, (_, i) => i);
            },
            work: () => {
              const g = gate();
              itemGates.push(g);
              return g.promise;
            },
          },
          new Logger('test'),
        );
        sut.start();
        await vi.advanceTimersByTimeAsync(0);
        expect(asked).toEqual([3]);
        itemGates[0].open();
        await vi.advanceTimersByTimeAsync(0);
        // A refill pass is claiming; two more items end meanwhile.
        expect(asked).toEqual([3, 1]);
        itemGates[1].open();
        itemGates[2].open();
        await vi.advanceTimersByTimeAsync(0);
        expect(asked).toEqual([3, 1]);
        claimGates[0].open();
        await vi.advanceTimersByTimeAsync(0);
        // One more pass for both, after the first ended, with the room both left.
        expect(asked).toEqual([3, 1, 2]);
        expect(overlapped).toBe(false);
        claimGates[1].open();
        await vi.advanceTimersByTimeAsync(0);
        expect(sut.active).toBe(3);
        for (const g of itemGates) g.open();
        await sut.stop();
      } finally {
        vi.useRealTimers();
      }
    });

    it('claims nothing more once stopClaiming() was called (the drain)', async () => {
      vi.useFakeTimers();
      try {
        const { sut, asked, gates } = setup(2, 10, { refill: true, firstDelayMs: 0 });
        sut.start();
        await vi.advanceTimersByTimeAsync(0);
        sut.stopClaiming();
        gates[0].open();
        await vi.advanceTimersByTimeAsync(120_000);
        expect(asked).toEqual([2]);
        for (const g of gates) g.open();
        await sut.stop();
      } finally {
        vi.useRealTimers();
      }
    });
  });
});
