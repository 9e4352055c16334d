/**
 * TEST-ONLY crash hook: `crashPoint(name)` kills this process with SIGKILL (no cleanup, like `kill -9`) when
 * CHECKOUT_CRASH_POINTS names the point (`name` = the first time it is reached, `name@n` = the n-th time).
 * `name:stop` (or `name@n:stop`) stops the process with SIGSTOP instead: a drive frozen there, as by a long GC
 * pause, until a SIGCONT resumes it at the same line (the zombie-drive tests of durable work's fencing).
 * Armed only by CheckoutService from a CheckoutConfig loaded with NODE_ENV=test; loadCheckoutConfig refuses
 * the variable in production, so a production build cannot enable it. Called right before and right after
 * each upstream call and each commit of the checkout state machine (docs/checkout.md lists them).
 */
export const CRASH_POINTS = [
  'before_commit_created',
  'after_commit_created',
  'before_revalidate',
  'after_revalidate',
  'before_commit_revalidated',
  'after_commit_revalidated',
  'before_commit_signing',
  'after_commit_signing',
  'before_sign',
  'after_sign',
  'before_commit_signed',
  'after_commit_signed',
  'before_submit',
  'after_submit',
  'before_commit_submitted',
  'after_commit_submitted',
  'before_purchase_status',
  'after_purchase_status',
  'before_commit_expired',
  'after_commit_expired',
  'before_commit_new_attempt',
  'after_commit_new_attempt',
  'before_commit_final',
  'after_commit_final',
  'before_refresh',
  'after_refresh',
] as const;

export type CrashPointName = (typeof CRASH_POINTS)[number];

/** Parsed spec: point → the n-th time it fires (1 = first), and whether it stops instead of killing. */
export function parseCrashPoints(spec: string | undefined): Map<string, number> {
  const armed = new Map<string, number>();
  for (const item of (spec ?? '').split(',').filter(Boolean)) {
    const [name, nth] = item.replace(/:stop$/, '').split('@') as [string, string | undefined];
    if (!(CRASH_POINTS as readonly string[]).includes(name)) throw new Error(`unknown crash point ${name}`);
    armed.set(name, nth === undefined ? 1 : Number(nth));
    if (item.endsWith(':stop')) stopping.add(name);
  }
  return armed;
}

/** Points armed with `:stop`: SIGSTOP, not SIGKILL. */
const stopping = new Set<string>();
let armed = new Map<string, number>();
const reached = new Map<string, number>();
let kill: () => void = () => process.kill(process.pid, 'SIGKILL');
let stop: () => void = () => process.kill(process.pid, 'SIGSTOP');

/**
 * Arms the hook (only when `allowed`, i.e. NODE_ENV=test). `killer` and `stopper` replace SIGKILL and SIGSTOP in
 * unit tests.
 */
export function armCrashPoints(
  spec: string | undefined,
  allowed: boolean,
  killer?: () => void,
  stopper?: () => void,
): void {
  stopping.clear();
  armed = allowed ? parseCrashPoints(spec) : new Map();
  reached.clear();
  if (killer) kill = killer;
  if (stopper) stop = stopper;
}

/** The crash seam: a no-op unless armed for `name` and reached for the configured n-th time. */
export function crashPoint(name: CrashPointName): void {
  if (armed.size === 0) return;
  const nth = armed.get(name);
  if (nth === undefined) return;
  const count = (reached.get(name) ?? 0) + 1;
  reached.set(name, count);
  if (count !== nth) return;
  if (stopping.has(name)) stop();
  else kill();
}
