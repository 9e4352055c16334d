import { readFileSync } from 'node:fs';
import { getMetadataStorage } from 'class-validator';
import { describe, expect, it } from 'vitest';
import { AppConfig, loadAppConfig } from './app.config';
import { AuthConfig } from './auth.config';
import { SandboxEnv } from './sandbox.config';
import { UpstreamConfig } from './upstream.config';
import { ConfigValidationError } from './validate-env';

function problemsOf(env: NodeJS.ProcessEnv): readonly string[] {
  try {
    loadAppConfig(env);
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
  return [];
}

describe(AppConfig.name, () => {
  it('applies the documented defaults with an empty environment', () => {
    const sut = loadAppConfig({});
    expect(sut.PORT).toBe(3000);
    expect(sut.HOST).toBe('127.0.0.1');
    expect(sut.DATABASE_URL).toBeUndefined();
    expect(sut.DATA_DIR).toBe('.data');
    expect(sut.LOG_LEVEL).toBe('info');
    expect(sut.MIGRATIONS_RUN).toBe(true);
    expect(sut.docsEnabled).toBe(true);
  });

  it('parses typed values', () => {
    const sut = loadAppConfig({
      PORT: '8080',
      MIGRATIONS_RUN: 'false',
      LOG_REDACT_PATHS: 'a.b, c',
      NODE_ENV: 'production',
    });
    expect(sut.PORT).toBe(8080);
    expect(sut.MIGRATIONS_RUN).toBe(false);
    expect(sut.LOG_REDACT_PATHS).toEqual(['a.b', 'c']);
    expect(sut.docsEnabled).toBe(false);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '1.5'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['MIGRATIONS_RUN', 'maybe'],
    ['NODE_ENV', 'staging'],
  ])('rejects %s=%s and names the variable', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems.some((p) => p.startsWith(`${name}:`))).toBe(true);
  });

  it('lists every bad variable at once and never echoes a value', () => {
    const problems = problemsOf({ PORT: 'abc', LOG_LEVEL: 'loud', DATABASE_URL: 'secret-not-a-url' });
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(['DATABASE_URL', 'LOG_LEVEL', 'PORT']);
    expect(problems.join('\n')).not.toContain('secret-not-a-url');
  });

  it("carries no variable it does not declare (other modules' secrets stay out)", () => {
    const sut = loadAppConfig({ UPSTREAM_API_KEY: 'canary-secret', PATH: '/bin' });
    expect(JSON.stringify(sut)).not.toContain('canary-secret');
    expect(Object.keys(sut)).not.toContain('PATH');
  });

  it('treats empty values as unset', () => {
    expect(loadAppConfig({ PORT: '', DATABASE_URL: '' }).PORT).toBe(3000);
  });

  describe('.env.example', () => {
    const example = readFileSync('.env.example', 'utf8');
    const documented = [...example.matchAll(/^#?\s?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]);
    // Every config class main.ts validates, by the variables its validation metadata declares
    // (optional ones without a default included, which `Object.keys(new X())` would miss).
    const classes: [string, new () => object][] = [
      [AppConfig.name, AppConfig],
      [AuthConfig.name, AuthConfig],
      [UpstreamConfig.name, UpstreamConfig],
      [SandboxEnv.name, SandboxEnv],
    ];
    const declared = classes.flatMap(([, cls]) => declaredVariables(cls));

    it.each(classes)('documents every variable of %s with a default or an example', (_name, cls) => {
      const missing = declaredVariables(cls).filter((name) => !documented.includes(name));
      expect(missing).toEqual([]);
    });

    it('documents no variable that no config class reads', () => {
      expect(documented.filter((name) => !declared.includes(name))).toEqual([]);
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
});

function declaredVariables(cls: new () => object): string[] {
  const names = getMetadataStorage()
    .getTargetValidationMetadatas(cls, '', true, false)
    .map((m) => m.propertyName)
    .filter((name) => /^[A-Z][A-Z0-9_]*$/.test(name));
  return [...new Set(names)];
}
