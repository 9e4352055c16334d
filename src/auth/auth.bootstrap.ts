import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AppConfig } from '../config/app.config';
import { AuthConfig } from '../config/auth.config';
import { generateApiKey, parseApiKey } from './api-key';
import { ApiClientsService } from './api-clients.service';

export const DEMO_KEY_FILE = 'demo-api-key';

/**
 * The demo key exists only for a local `npm start` with no configuration: the local demo (loopback HOST, the
 * in-process sandbox; config/deployment.ts) on the embedded database, never anywhere else.
 */
export function demoKeyAllowed(app: AppConfig, auth: AuthConfig): boolean {
  return app.NODE_ENV === 'development' && app.localDemo && !app.DATABASE_URL && !auth.BFF_BOOTSTRAP_API_KEY;
}

/**
 * At startup: registers BFF_BOOTSTRAP_API_KEY as an admin client when no client has it yet; or, in
 * development on the embedded database, creates a demo admin key on first start, saves it to
 * `<DATA_DIR>/demo-api-key` (mode 0600) and prints it once to stdout as a plain line. Keys never
 * go through the logger: log lines carry the client id only.
 */
@Injectable()
export class AuthBootstrap implements OnApplicationBootstrap {
  private readonly logger = new Logger('AuthBootstrap');

  constructor(
    private readonly clients: ApiClientsService,
    private readonly auth: AuthConfig,
    private readonly app: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.auth.BFF_BOOTSTRAP_API_KEY) {
      await this.register(this.auth.BFF_BOOTSTRAP_API_KEY, 'bootstrap', 'BFF_BOOTSTRAP_API_KEY');
    } else if (demoKeyAllowed(this.app, this.auth)) {
      await this.ensureDemoKey();
    }
  }

  private async register(key: string, name: string, source: string): Promise<void> {
    const result = await this.clients.registerExisting(key, name, ['admin']);
    if (result.status === 'conflict') {
      this.logger.error({ source }, 'bootstrap key not registered: another client has the same key prefix');
    } else {
      this.logger.log(
        { source, clientId: result.clientId, status: result.status },
        'bootstrap admin key checked',
      );
    }
  }

  private async ensureDemoKey(): Promise<void> {
    const dataDir = resolve(this.app.DATA_DIR);
    const file = join(dataDir, DEMO_KEY_FILE);
    if (existsSync(file)) {
      const saved = (await readFile(file, 'utf8')).trim();
      if (!parseApiKey(saved)) {
        this.logger.warn({ file }, 'demo key file is not a valid key; delete it to get a new one');
        return;
      }
      await this.register(saved, 'demo', 'demo key file');
      return;
    }
    const key = generateApiKey();
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    await this.register(key, 'demo', 'demo key file');
    // Deliberately not a log line: secrets never reach the logger.
    process.stdout.write(
      `\nDemo admin API key (development only, shown once; also saved to ${file}, mode 0600):\n  ${key}\n` +
        `Try: curl -H "Authorization: Bearer $(cat ${file})" http://${this.app.HOST}:${this.app.PORT}/v1/me\n\n`,
    );
  }
}
