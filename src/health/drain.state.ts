import { Injectable } from '@nestjs/common';

/**
 * Whether this replica is draining: shutdown has begun, so readiness answers 503 at once (load balancers stop
 * routing here) while every other route keeps serving, each answer with `Connection: close` so keep-alive
 * clients reconnect elsewhere. main.ts flips it on SIGTERM, a drain delay before `app.close()`, through `beginDrain`
 * (app.factory.ts), which also stops durable work claiming; the close itself flips it too (app.factory.ts), so a
 * close without a signal drains the same way (its destroy hooks have stopped the worker loops by then).
 */
@Injectable()
export class DrainState {
  private started = false;

  /** Starts draining; there is no way back (a draining replica only ever closes). */
  begin(): void {
    this.started = true;
  }

  get draining(): boolean {
    return this.started;
  }
}
