import { Logger } from '@nestjs/common';
import { Client } from 'pg';

/** Channel catalog-sync notifies in every transaction that bumps `mirror_generation`. */
export const MIRROR_GENERATION_CHANNEL = 'mirror_generation';

/**
 * One dedicated connection LISTENing on `mirror_generation`: calls `onChange` for every notification
 * and whenever the connection is (re)established (a notification may have been missed while it was
 * down). Reconnects after `retryMs` until stopped; never more than one connection at a time.
 */
export class MirrorGenerationListener {
  private readonly logger = new Logger(MirrorGenerationListener.name);
  private client: Client | null = null;
  private retry: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly onChange: (payload: string | null) => void,
    private readonly retryMs = 1000,
  ) {}

  /** Resolves once listening (or after the first failed attempt, a retry then being scheduled). */
  async start(): Promise<void> {
    if (this.stopped || this.client) return;
    const client = new Client({ connectionString: this.url, application_name: 'ticket-resale-bff-listen' });
    this.client = client;
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = null;
      void client.end().catch(() => undefined);
      this.scheduleRetry();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      if (message.channel === MIRROR_GENERATION_CHANNEL) this.onChange(message.payload ?? null);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${MIRROR_GENERATION_CHANNEL}`);
      this.onChange(null);
    } catch (error) {
      this.logger.warn(`mirror generation listener not connected: ${(error as Error).message}`);
      lost();
    }
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      void this.start();
    }, this.retryMs);
    this.retry.unref();
  }

  get listening(): boolean {
    return this.client !== null;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }
}
