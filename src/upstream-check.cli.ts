import 'reflect-metadata';
import pino from 'pino';
import { loadUpstreamConfig, type UpstreamConfig } from './config/upstream.config';
import { ConfigValidationError } from './config/validate-env';
import { UpstreamClient } from './upstream/upstream.client';
import { upstreamOptionsFromConfig } from './upstream/upstream.options';
import { resolveUpstreamTarget, type UpstreamTarget } from './upstream-target';

/** Exit codes of `npm run upstream:check`. */
export const EXIT_OK = 0;
export const EXIT_BAD_KEY_OR_ENVIRONMENT = 1;
export const EXIT_UNREACHABLE = 2;

/** The base URL without userinfo, safe to print. */
function printableUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '(invalid URL)';
  }
}

/**
 * Checks the configured key against the configured upstream (contract 5.7: `limit=1` on upcoming events
 * answering 200) and prints the verdict. Without UPSTREAM_BASE_URL it checks the in-process sandbox, as the
 * service would use it. Never prints the key.
 */
export async function runUpstreamCheck(
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
  logger: pino.Logger = pino({ level: 'warn' }, pino.destination(2)),
): Promise<number> {
  let config: UpstreamConfig;
  try {
    config = loadUpstreamConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    out(`upstream check: configuration invalid\n${error.message}`);
    return EXIT_BAD_KEY_OR_ENVIRONMENT;
  }
  let target: UpstreamTarget | undefined;
  let client: UpstreamClient | undefined;
  try {
    target = await resolveUpstreamTarget(config);
    const { baseUrl, sandbox } = target;
    client = UpstreamClient.create(upstreamOptionsFromConfig(config, target, { logger }));
    const verdict = await client.verifyKey();
    const where = `${printableUrl(baseUrl)}${sandbox === null ? '' : ' (in-process sandbox)'}`;
    if (verdict.ok) {
      out(`upstream check: OK — the key works (environment=${verdict.environment}, upstream=${where})`);
      return EXIT_OK;
    }
    const badKey = verdict.code === 'UNAUTHORIZED' || verdict.code === 'FORBIDDEN';
    out(
      `upstream check: ${badKey ? 'KEY REJECTED' : 'UNREACHABLE'} — ${verdict.reason} ` +
        `(code=${verdict.code}${verdict.status === undefined ? '' : `, status=${verdict.status}`}, ` +
        `environment=${verdict.environment}, upstream=${where})`,
    );
    return badKey ? EXIT_BAD_KEY_OR_ENVIRONMENT : EXIT_UNREACHABLE;
  } finally {
    client?.close();
    await target?.sandbox?.close();
  }
}

if (require.main === module) {
  runUpstreamCheck(process.env, (line) => process.stdout.write(`${line}\n`))
    .then((code) => {
      process.exitCode = code;
    })
    .catch((error: unknown) => {
      process.stderr.write(
        `upstream check failed: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      process.exitCode = EXIT_UNREACHABLE;
    });
}
