import { Writable } from 'node:stream';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { inject } from 'vitest';
import { createApp } from '../../src/app.factory';
import { loadAppConfig } from '../../src/config/app.config';
import { createDatabaseFromTemplate, dropDatabase } from './test-database';

/** Collects every JSON log line the app writes, for assertions (e.g. no secret ever logged). */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  get text(): string {
    return this.lines.join('\n');
  }
  records(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

export interface TestApp {
  app: NestFastifyApplication;
  logs: LogCapture;
  databaseUrl: string;
  close(): Promise<void>;
}

/** The whole service on its own copy of the migrated template database, logs captured in memory. */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const adminUrl = inject('databaseAdminUrl');
  const databaseUrl = await createDatabaseFromTemplate(adminUrl);
  const config = loadAppConfig({ NODE_ENV: 'test', LOG_LEVEL: 'info', ...env, DATABASE_URL: databaseUrl });
  const logs = new LogCapture();
  const { app } = await createApp({ config, databaseUrl, logDestination: logs });
  await app.getHttpAdapter().getInstance().ready();
  return {
    app,
    logs,
    databaseUrl,
    async close() {
      await app.close();
      await dropDatabase(adminUrl, databaseUrl);
    },
  };
}
