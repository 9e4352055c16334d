import { SandboxEnv } from './config/sandbox.config';
import { loadServiceConfig, type ServiceConfig } from './config/service-config';
import type { UpstreamConfig } from './config/upstream.config';
import { collectProblems, ConfigValidationError } from './config/validate-env';
import { faultRulesFromEnv, sandboxOptionsFromEnv } from './sandbox/sandbox.env';
import type { SandboxOptions } from './sandbox/sandbox.options';
import { startSandbox, type SandboxHandle } from './sandbox/sandbox.server';

/**
 * Startup wiring beside main.ts: the only production code that knows both the upstream client's config and
 * the sandbox, so neither config/ nor upstream/ imports sandbox/.
 */

export interface StartupConfig extends ServiceConfig {
  /** startSandbox options of the in-process sandbox; empty when UPSTREAM_BASE_URL points elsewhere. */
  sandboxOptions: SandboxOptions;
}

/**
 * loadServiceConfig plus the sandbox's own judgement of its fault rules, so one failed start still lists
 * every bad variable (names only).
 */
export function loadStartupConfig(env: NodeJS.ProcessEnv): StartupConfig {
  const problems: string[] = [];
  const service = collectProblems(() => loadServiceConfig(env), problems);
  const usesSandbox = service?.upstream.usesInProcessSandbox ?? true;
  const faults = usesSandbox ? collectProblems(() => faultRulesFromEnv(env.SANDBOX_FAULTS), problems) : [];
  if (service === undefined || faults === undefined || problems.length > 0) {
    throw new ConfigValidationError(problems);
  }
  const sandboxOptions =
    service.sandbox instanceof SandboxEnv ? sandboxOptionsFromEnv(service.sandbox, faults) : {};
  return { ...service, sandboxOptions };
}

export interface UpstreamTarget {
  baseUrl: string;
  apiKey: string;
  /** The in-process sandbox serving as the upstream, when UPSTREAM_BASE_URL is unset; close it last. */
  sandbox: SandboxHandle | null;
}

/**
 * UPSTREAM_BASE_URL + UPSTREAM_API_KEY when set; otherwise an in-process sandbox on an ephemeral loopback
 * port, seeded with its demo data (SANDBOX_* variables), whose full-access key the client then uses.
 */
export async function resolveUpstreamTarget(
  config: UpstreamConfig,
  sandboxOptions: SandboxOptions = {},
): Promise<UpstreamTarget> {
  if (config.UPSTREAM_BASE_URL !== undefined) {
    // loadUpstreamConfig refuses a base URL without a key, so the key is present here.
    return { baseUrl: config.UPSTREAM_BASE_URL, apiKey: config.UPSTREAM_API_KEY ?? '', sandbox: null };
  }
  const sandbox = await startSandbox({
    ...sandboxOptions,
    host: '127.0.0.1',
    port: 0,
    ...(config.UPSTREAM_API_KEY === undefined ? {} : { apiKey: config.UPSTREAM_API_KEY }),
  });
  return { baseUrl: sandbox.url, apiKey: sandbox.admin.apiKey, sandbox };
}
