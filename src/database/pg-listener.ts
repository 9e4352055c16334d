import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';

/** Called with a notification's payload, and with null whenever the connection is (re)established. */
export type NotificationHandler = (payload: string | null) => void;

/** A channel name as LISTEN takes it unquoted: lower-case letters, digits and underscores. */
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The process's one LISTEN connection (a dedicated `pg` client beside the pool: a pooled connection cannot hold a
 * LISTEN). Modules subscribe to channels (`listen`); each handler is called for every notification of its channel
 * and with null whenever the connection is (re)established, since a notification may have been missed while it
 * was down — so a handler treats null as "look again". After a lost connection it reconnects every `retryMs`
 * (the shortest any subscriber asked for) until the application closes; never more than one connection.
 * Notifications are hints: every subscriber also polls (LISTEN/NOTIFY as a hint, polling as the fallback).
 */
@Injectable()
export class PgListener implements OnModuleDestroy {
  private readonly logger = new Logger(PgListener.name);
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private client: Client | null = null;
  private connecting: Promise<void> | null = null;
  private retry: NodeJS.Timeout | null = null;
  private retryMs = Infinity;
  private stopped = false;

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Subscribes `onNotify` to `channel`; resolves once the connection listens on it (or after a failed attempt, a
   * retry then being scheduled). The handler is called with null at once when the connection is already up.
   */
  async listen(channel: string, onNotify: NotificationHandler, retryMs = 1000): Promise<void> {
    if (!CHANNEL.test(channel)) throw new Error(`not a channel name: ${channel}`);
    this.retryMs = Math.min(this.retryMs, retryMs);
    const subscribed = this.handlers.get(channel);
    if (subscribed) subscribed.add(onNotify);
    else this.handlers.set(channel, new Set([onNotify]));
    if (this.connecting) await this.connecting;
    const client = this.client;
    if (client) {
      if (!subscribed) await client.query(`LISTEN ${channel}`).catch(() => undefined);
      onNotify(null);
      return;
    }
    await this.connect();
  }

  get listening(): boolean {
    return this.client !== null;
  }

  /** Stops listening (the close): no handler is called after it; no reconnection. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }

  private connect(): Promise<void> {
    this.connecting ??= this.open().finally(() => (this.connecting = null));
    return this.connecting;
  }

  private async open(): Promise<void> {
    if (this.stopped || this.client) return;
    const url = (this.dataSource.options as { url?: string }).url;
    if (!url) throw new Error('the data source has no url to listen on');
    const client = new Client({ connectionString: url, application_name: 'ticket-resale-bff-listen' });
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = null;
      void client.end().catch(() => undefined);
      this.scheduleRetry();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? null);
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
      this.client = client;
    } catch (error) {
      this.logger.warn(`LISTEN connection not established: ${(error as Error).message}`);
      void client.end().catch(() => undefined);
      this.scheduleRetry();
      return;
    }
    for (const handlers of this.handlers.values()) for (const handler of handlers) handler(null);
  }

  private scheduleRetry(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(
      () => {
        this.retry = null;
        void this.connect();
      },
      Number.isFinite(this.retryMs) ? this.retryMs : 1000,
    );
    this.retry.unref();
  }
}
