import { defineConfig } from 'vitest/config';
import { swcPlugin } from './vitest.shared.mts';

export default defineConfig({
  plugins: [swcPlugin],
  test: {
    pool: 'forks',
    setupFiles: ['reflect-metadata'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.spec.ts', 'clients/**/*.spec.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'contract',
          include: ['test/contract/**/*.contract-spec.ts'],
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.integration-spec.ts', 'test/**/*.e2e-spec.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          maxWorkers: 2,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
