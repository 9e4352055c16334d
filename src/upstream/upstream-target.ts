import type { SandboxOptions } from '../sandbox/sandbox.options';
import { startSandbox, type SandboxHandle } from '../sandbox/sandbox.server';
import type { UpstreamConfig } from '../config/upstream.config';

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
