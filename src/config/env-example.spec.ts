import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppConfig } from './app.config';
import { AuthConfig } from './auth.config';
import { CheckoutConfig } from './checkout.config';
import { ListingsConfig } from './listings.config';
import { SandboxEnv } from './sandbox.config';
import { TransactionsConfig } from './transactions.config';
import { SyncConfig } from './sync.config';
import { UpstreamConfig } from './upstream.config';
import { WebhooksConfig } from './webhooks.config';
import { declaredVariables } from './validate-env';

describe('.env.example', () => {
  const example = readFileSync('.env.example', 'utf8');
  const documented = [...example.matchAll(/^#?\s?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);
  // Every config class main.ts validates, by the variables its validation metadata declares
  // (optional ones without a default included, which `Object.keys(new X())` would miss).
  const classes: [string, new () => object][] = [
    [AppConfig.name, AppConfig],
    [AuthConfig.name, AuthConfig],
    [ListingsConfig.name, ListingsConfig],
    [UpstreamConfig.name, UpstreamConfig],
    [SandboxEnv.name, SandboxEnv],
    [TransactionsConfig.name, TransactionsConfig],
    [SyncConfig.name, SyncConfig],
    [CheckoutConfig.name, CheckoutConfig],
    [WebhooksConfig.name, WebhooksConfig],
  ];
  const declared = classes.flatMap(([, cls]) => declaredVariables(cls));

  it.each(classes)('documents every variable of %s with a default or an example', (_name, cls) => {
    const missing = declaredVariables(cls).filter((name) => !documented.includes(name));
    expect(missing).toEqual([]);
  });

  it('documents no variable that no config class reads (OTEL_*: read by the OpenTelemetry SDK, docs/tracing.md)', () => {
    const undeclared = documented.filter((name) => !declared.includes(name));
    expect(undeclared.filter((name) => !name.startsWith('OTEL_'))).toEqual([]);
  });

  it('documents the OpenTelemetry variables commented out: tracing is off by default', () => {
    const otel = example.split('\n').filter((line) => /^#?\s?OTEL_[A-Z0-9_]*=/.test(line));
    expect(otel.length).toBeGreaterThan(0);
    expect(otel.filter((line) => !line.startsWith('# '))).toEqual([]);
  });

  it('explains every variable in a comment above it', () => {
    const lines = example.split('\n');
    const bare = lines
      .map((line, i) => ({ line, above: lines.slice(0, i).toReversed() }))
      .filter(({ line }) => /^#?\s?[A-Z][A-Z0-9_]*=/.test(line))
      .filter(({ above }) => {
        // The nearest comment block above (other variables of the same group may sit in between).
        const comment = above.find((l) => l.startsWith('# ') && !/^#\s?[A-Z][A-Z0-9_]*=/.test(l));
        return comment === undefined || comment.startsWith('# ---');
      })
      .map(({ line }) => line);
    expect(bare).toEqual([]);
  });
});
