import { readFileSync } from 'node:fs';
import { configClasses } from '../../test/support/config-classes';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { syncPassWorstCase } from '../catalog-sync/catalog-sync.retries';
import { orderWorstCase } from '../checkout/checkout.retries';
import { retriedFields } from '../config/retry-description';
import { declaredVariables } from '../config/validate-env';
import { RETRIES_DOC_PATH } from '../retries.cli';
import { ledgerWorstCase } from '../transactions/transactions.retries';
import { renderRetriesDoc } from './retries-doc';
import {
  defaultRetriesConfig,
  finiteWorstCaseTimes,
  retryDescriptions,
  type RetriesConfig,
} from './retries.bundle';

/** A variable whose name says it bounds a retry, lease, poll, wait or give-up. */
const RETRY_LIKE =
  /RETRY|RETRIES|LEASE|POLL|INTERVAL|TIMEOUT|ATTEMPT|BACKOFF|GIVE_UP|DELAY|GRACE|WINDOW|TTL|JITTER|DEADLINE|TRIES/;

/** The config object of the bundle that declares `name`. */
function ownerOf(config: RetriesConfig, name: string): Record<string, unknown> {
  const owner = Object.values(config).find((c: object) => name in c) as Record<string, unknown> | undefined;
  if (!owner) throw new Error(`no config class holds ${name}`);
  return owner;
}

function withSetting(name: string, value: number, base = defaultRetriesConfig()): RetriesConfig {
  ownerOf(base, name)[name] = value;
  return base;
}

describe(renderRetriesDoc.name, () => {
  it('is what docs/RETRIES.md says', () => {
    const sut = renderRetriesDoc(defaultRetriesConfig());

    expect(
      readFileSync(RETRIES_DOC_PATH, 'utf8'),
      'docs/RETRIES.md is out of date: run `npm run docs:retries` and commit the result',
    ).toBe(sut);
  });

  it('shows a changed default', () => {
    const sut = renderRetriesDoc(withSetting('CHECKOUT_MAX_ATTEMPTS', 7));

    expect(sut).toMatch(/\| `CHECKOUT_MAX_ATTEMPTS` +\| 7 +\|/);
    expect(sut).not.toBe(renderRetriesDoc(defaultRetriesConfig()));
  });
});

describe(retryDescriptions.name, () => {
  it('lists every retry-like variable of every config class', async () => {
    const classes = await configClasses();
    const sut = new Set(retryDescriptions().map((setting) => setting.name));

    const missing = classes.flatMap(([name, cls]) =>
      declaredVariables(cls)
        .filter((variable) => RETRY_LIKE.test(variable) && !sut.has(variable))
        .map((variable) => `${name}.${variable}`),
    );

    expect(classes.length).toBeGreaterThanOrEqual(8);
    expect(missing, 'mark these @Retried in their config class').toEqual([]);
  });

  it('names only variables some config class declares, with the value of the config it is given', async () => {
    const declared = new Set((await configClasses()).flatMap(([, cls]) => declaredVariables(cls)));
    const config = defaultRetriesConfig();
    const sut = retryDescriptions(config).filter((setting) => setting.source === 'env');

    expect(sut.filter((setting) => !declared.has(setting.name)).map((s) => s.name)).toEqual([]);
    expect(sut.map((setting) => [setting.name, setting.value])).toEqual(
      sut.map((setting) => [setting.name, ownerOf(config, setting.name)[setting.name]]),
    );
  });

  it('gathers every @Retried field of every config class (a module that forgets its own is caught)', async () => {
    const sut = new Set(retryDescriptions().map((setting) => setting.name));

    const marked = (await configClasses()).flatMap(([, cls]) => retriedFields(cls));

    expect(marked.length).toBeGreaterThan(60);
    expect(marked.filter((name) => !sut.has(name))).toEqual([]);
  });

  it('lists each setting once', () => {
    const names = retryDescriptions().map((setting) => setting.name);

    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });
});

describe(orderWorstCase.name, () => {
  it('makes more revalidation reads with more attempts per order', () => {
    const fewer = orderWorstCase(withSetting('CHECKOUT_MAX_ATTEMPTS', 3));
    const sut = orderWorstCase(withSetting('CHECKOUT_MAX_ATTEMPTS', 4));

    expect(sut.calls.revalidationReads.value).toBeGreaterThan(
      fewer.calls.revalidationReads.value ?? Infinity,
    );
    expect(sut.revalidationHttpAttempts.value).toBeGreaterThan(
      fewer.revalidationHttpAttempts.value ?? Infinity,
    );
  });

  it('revalidates longer with a longer give-up and more often with a shorter worker interval', () => {
    const base = orderWorstCase(defaultRetriesConfig());
    const longer = orderWorstCase(withSetting('CHECKOUT_REVALIDATE_GIVE_UP_MS', 600_000));
    const faster = orderWorstCase(withSetting('CHECKOUT_WORKER_INTERVAL_MS', 100));

    expect(longer.revalidationTimePerAttempt.value).toBeGreaterThan(
      base.revalidationTimePerAttempt.value ?? 0,
    );
    expect(faster.revalidationWalksPerAttempt.value).toBeGreaterThan(
      base.revalidationWalksPerAttempt.value ?? 0,
    );
  });

  it('says so where the code sets no bound', () => {
    const sut = orderWorstCase(defaultRetriesConfig());

    for (const bound of [sut.time, sut.calls.signing, sut.calls.submissions, sut.calls.purchaseStatus]) {
      expect(bound.value).toBeNull();
      expect(bound.arithmetic).toMatch(/^unbounded while /);
    }
  });
});

describe(ledgerWorstCase.name, () => {
  it('repeats an unknown signing more often in a longer window and re-sends more with a longer give-up', () => {
    const base = ledgerWorstCase(defaultRetriesConfig());
    const wider = ledgerWorstCase(withSetting('TX_SIGN_RESOLVE_WINDOW_MS', 7_200_000));
    const later = ledgerWorstCase(withSetting('TX_GIVE_UP_GRACE_MS', 600_000));

    expect(wider.signing.calls.value).toBeGreaterThan(base.signing.calls.value ?? Infinity);
    expect(later.submissions.calls.value).toBeGreaterThan(base.submissions.calls.value ?? Infinity);
    expect(later.submissions.time.value).toBeGreaterThan(base.submissions.time.value ?? Infinity);
  });
});

describe(syncPassWorstCase.name, () => {
  it('makes pages × attempts HTTP attempts, more with a bigger catalog or more upstream attempts', () => {
    const base = syncPassWorstCase(defaultRetriesConfig(), 'listings', 2000);
    const bigger = syncPassWorstCase(defaultRetriesConfig(), 'listings', 20_000);
    const moreAttempts = syncPassWorstCase(withSetting('UPSTREAM_MAX_ATTEMPTS', 6), 'listings', 2000);

    expect(bigger.calls.value).toBeGreaterThan(base.calls.value ?? Infinity);
    expect(moreAttempts.httpAttempts.value).toBeGreaterThan(base.httpAttempts.value ?? Infinity);
    expect(moreAttempts.calls.value).toBe(base.calls.value);
  });
});

describe(finiteWorstCaseTimes.name, () => {
  /** Every time-valued variable in the catalog (delays, timeouts, leases, intervals, windows). */
  const delaySettings = retryDescriptions()
    .filter((setting) => setting.source === 'env' && setting.unit === 'ms')
    .map((setting) => setting.name);

  it.each(delaySettings)('never falls when %s rises, whatever the other settings', (raised) => {
    const settings = fc.record(
      Object.fromEntries(delaySettings.map((name) => [name, fc.integer({ min: 10, max: 3_600_000 })])),
    );
    fc.assert(
      fc.property(settings, fc.integer({ min: 1, max: 3_600_000 }), (values, by) => {
        const before = defaultRetriesConfig();
        for (const [name, value] of Object.entries(values)) withSetting(name, value, before);
        const after = withSetting(raised, values[raised] + by, copyOf(before));

        const sut = { before: finiteWorstCaseTimes(before), after: finiteWorstCaseTimes(after) };

        expect(Object.keys(sut.after)).toEqual(Object.keys(sut.before));
        for (const [name, ms] of Object.entries(sut.before))
          expect(sut.after[name], `${name} after raising ${raised}`).toBeGreaterThanOrEqual(ms);
      }),
      { numRuns: 50 },
    );
  });

  it('covers a delay setting of each module', () => {
    expect(delaySettings).toEqual(
      expect.arrayContaining([
        'UPSTREAM_BACKOFF_MAX_MS',
        'CHECKOUT_RETRY_MAX_DELAY_MS',
        'TX_RESUBMIT_MAX_DELAY_MS',
        'SYNC_JITTER_MS',
      ]),
    );
  });
});

/** A copy of the bundle (class instances kept: the catalog reads them by key). */
function copyOf(config: RetriesConfig): RetriesConfig {
  const copy = defaultRetriesConfig();
  for (const key of Object.keys(config) as (keyof RetriesConfig)[]) Object.assign(copy[key], config[key]);
  return copy;
}
