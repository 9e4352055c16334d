// Preloaded with `node --require` into a service process a test starts (NODE_OPTIONS): shifts the process's
// wall clock (Date, Date.now) by FAKE_CLOCK_OFFSET_MS, as a replica whose host clock runs ahead or behind.
// The monotonic clock (performance.now, timers) is left alone, as it is on a real host with a wrong clock.
'use strict';
const offset = Number(process.env.FAKE_CLOCK_OFFSET_MS ?? '0');
if (!Number.isFinite(offset)) throw new Error('FAKE_CLOCK_OFFSET_MS must be a number of milliseconds');
const RealDate = Date;
class OffsetDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + offset);
    else super(...args);
  }
  static now() {
    return RealDate.now() + offset;
  }
}
globalThis.Date = OffsetDate;
