import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { loadAppConfig } from '../config/app.config';
import { loadAuthConfig } from '../config/auth.config';
import { buildDataSourceOptions } from '../database/data-source';
import { withServiceDatabase } from '../database/database-url';
import { MigratingDataSource } from '../database/migration-lock';
import { generateApiKey } from './api-key';
import { ApiClientEntity } from './api-client.entity';
import { type ListPosition } from './api-client.repository';
import { ApiClientsService, isValidClientName, type ApiClientView } from './api-clients.service';
import { ApiClientResponseDto } from './dto/api-client.response.dto';
import { KeysCliModule } from './keys-cli.module';
import { parseScopeList, SCOPES } from './scopes';
import { ANY_SUBJECT, bindingProblem, describeBinding, type BindingRequest } from './subject-binding';

export interface KeysIo {
  out(text: string): void;
  err(text: string): void;
}

export const KEYS_USAGE = `usage: npm run keys -- <command>
  create --name <name> --scopes <scope,...> [--json]   issue a key (printed once, never stored)
         [--user-subject <pattern>]...                  bind it: the user subjects it may act for
         [--integrator-subject <pattern>]...            bind it: the integrator subjects it may sign as
         [--any-subject]                                or leave it unbound: it may act for any subject
  list [--json]                                         every client, no secrets
  revoke <id>                                           revoke a client and every key it issued (401 within API_KEY_CACHE_TTL_MS, default 2 s)
  generate                                              print a new well-formed key, store nothing
                                                        (for BFF_BOOTSTRAP_API_KEY)
scopes: ${SCOPES.join(', ')} (admin implies all)
patterns: an exact subject, or a prefix ending in one * (acme-*); * alone: every subject of that kind.
  With either option the key is bound (the other list empty unless given). A non-admin key with
  listings:write, orders:write or transactions:write needs a binding or --any-subject (the explicit
  opt-in to an unbound key). An admin key cannot be bound.`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

class UsageError extends Error {}

function table(views: ApiClientView[]): string {
  const rows = [
    ['ID', 'NAME', 'KEY PREFIX', 'SCOPES', 'BINDING', 'CREATED', 'REVOKED', 'LAST USED'],
    ...views.map((v) => [
      v.id,
      v.name,
      v.keyPrefix,
      v.scopes.join(','),
      describeBinding(v.binding),
      v.createdAt.toISOString(),
      v.revokedAt?.toISOString() ?? '-',
      v.lastUsedAt?.toISOString() ?? '-',
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * Opens the service's database (DATABASE_URL, or the embedded cluster: attached when running) and the CLI's Nest
 * context over it (KeysCliModule): the service with the app's revocation listeners (a revoke disables webhooks).
 */
async function withService<T>(
  env: NodeJS.ProcessEnv,
  fn: (service: ApiClientsService) => Promise<T>,
): Promise<T> {
  const auth = loadAuthConfig(env);
  const app = loadAppConfig(env);
  const dataSource = (url: string): DataSource =>
    new MigratingDataSource({
      ...buildDataSourceOptions({
        url,
        poolSize: 2,
        migrationsRun: app.MIGRATIONS_RUN,
        applicationName: 'ticket-resale-bff-keys',
      }),
      entities: [ApiClientEntity],
    });
  return withServiceDatabase(app, dataSource, async (ds) => {
    const context = await NestFactory.createApplicationContext(KeysCliModule.over(ds, auth.pepper), {
      logger: false,
      abortOnError: false,
    });
    try {
      return await fn(context.get(ApiClientsService));
    } finally {
      await context.close();
    }
  });
}

async function listAll(service: ApiClientsService): Promise<ApiClientView[]> {
  const all: ApiClientView[] = [];
  let after: ListPosition | undefined;
  for (;;) {
    const page = await service.list(100, { after });
    all.push(...page);
    const last = page.at(-1);
    if (page.length < 100 || !last) return all;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

/** The binding the create options ask for: either option binds the key; --any-subject opts in to none. */
function bindingOption(
  user: string[] | undefined,
  integrator: string[] | undefined,
  anySubject: boolean,
): BindingRequest {
  if (user === undefined && integrator === undefined) return anySubject ? ANY_SUBJECT : null;
  if (anySubject) throw new UsageError('--any-subject: not with --user-subject/--integrator-subject');
  return { userSubjects: [...new Set(user ?? [])], integratorSubjects: [...new Set(integrator ?? [])] };
}

async function run(argv: string[], env: NodeJS.ProcessEnv, io: KeysIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      'user-subject': { type: 'string', multiple: true },
      'integrator-subject': { type: 'string', multiple: true },
      'any-subject': { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    io.out(KEYS_USAGE);
    return values.help ? 0 : 2;
  }
  switch (command) {
    case 'generate':
      io.out(generateApiKey());
      return 0;
    case 'create': {
      const name = values.name ?? '';
      if (!isValidClientName(name)) throw new UsageError('--name: 1..100 characters, no control characters');
      let scopes;
      try {
        scopes = parseScopeList(values.scopes ?? '');
      } catch (error) {
        throw new UsageError(`--scopes: ${(error as Error).message}`);
      }
      const binding = bindingOption(
        values['user-subject'],
        values['integrator-subject'],
        values['any-subject'],
      );
      const problem = bindingProblem(scopes, binding);
      if (problem !== undefined)
        throw new UsageError(`--user-subject/--integrator-subject/--any-subject: ${problem}`);
      const issued = await withService(env, (service) => service.issue(name, scopes, null, binding));
      if (values.json) {
        io.out(JSON.stringify(Object.assign(ApiClientResponseDto.from(issued.client), { key: issued.key })));
      } else {
        io.out(
          `created API client ${issued.client.id} (${issued.client.name}), scopes: ${issued.client.scopes.join(', ')}\n` +
            `binding: ${issued.client.binding ? describeBinding(issued.client.binding) : 'none (any subject)'}\n` +
            `key (shown only this once, it cannot be retrieved later):\n${issued.key}`,
        );
      }
      return 0;
    }
    case 'list': {
      const views = await withService(env, listAll);
      io.out(values.json ? JSON.stringify(views.map((v) => ApiClientResponseDto.from(v))) : table(views));
      return 0;
    }
    case 'revoke': {
      const id = rest[0];
      if (!id || !UUID.test(id) || rest.length > 1) throw new UsageError('revoke <id>: one client id (uuid)');
      const revoked = await withService(env, (service) => service.revoke(id.toLowerCase()));
      if (!revoked) {
        io.err(`no API client ${id}`);
        return 1;
      }
      io.out(
        `revoked API client ${revoked.id} (${revoked.name}) at ${revoked.revokedAt?.toISOString() ?? '?'}`,
      );
      for (const issued of revoked.alsoRevoked)
        io.out(`revoked API client ${issued} (issued by a revoked key)`);
      return 0;
    }
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

/**
 * `npm run keys -- …`: the same database, pepper and hashing as the service. Exit codes: 0 done,
 * 1 failed (no such client, database error), 2 usage or configuration error.
 */
export async function runKeysCommand(argv: string[], env: NodeJS.ProcessEnv, io: KeysIo): Promise<number> {
  try {
    return await run(argv, env, io);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`${(error as Error).message}\n${KEYS_USAGE}`);
      return 2;
    }
    if ((error as Error).name === 'ConfigValidationError') {
      io.err((error as Error).message);
      return 2;
    }
    // Driver errors can quote connection details; print the message only, never a stack or config.
    io.err(`keys: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
