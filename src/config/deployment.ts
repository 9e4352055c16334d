/**
 * The one notion every development allowance keys on (docs/DEPLOY.md "Local demo or deployment").
 *
 * A process is a **local demo** when it serves only its own machine (HOST is a loopback address) and moves only
 * test money (no UPSTREAM_BASE_URL: the in-process sandbox is the upstream), and NODE_ENV is not `production`.
 * Only then may it fall back to the public development pepper, create the demo key, and open `/docs`, the status
 * page, `/metrics` and loopback/private webhook targets by default. Anything else is a deployment: it refuses to
 * start without its secrets (exit 2, one line per missing variable) and every allowance needs its own variable.
 * Decided by what the process serves and reaches, not by a variable a deploy can forget: NODE_ENV defaults to
 * `development`, so it can force the strict mode but never relax it.
 */
export function isLocalDemo(env: NodeJS.ProcessEnv): boolean {
  if (env.NODE_ENV === 'production') return false;
  if (nonEmpty(env.UPSTREAM_BASE_URL)) return false;
  return isLoopbackHost(nonEmpty(env.HOST) ? (env.HOST as string) : DEFAULT_HOST);
}

/** AppConfig's HOST default (kept here so isLocalDemo agrees with it without importing the class). */
export const DEFAULT_HOST = '127.0.0.1';

const nonEmpty = (value: string | undefined): boolean => value !== undefined && value !== '';

/** 127.0.0.0/8, ::1 (bracketed or not) and `localhost`: a listener only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The problem line of a secret a deployment cannot start without (names only, never a value). */
export function missingSecret(name: string, what: string): string {
  return (
    `${name}: required outside the local demo (NODE_ENV=production, a non-loopback HOST or UPSTREAM_BASE_URL set); ` +
    what
  );
}
