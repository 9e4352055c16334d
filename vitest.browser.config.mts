import { defineConfig } from 'vitest/config';
import { swcPlugin } from './vitest.shared.mts';

// `npm run test:browser`: the status page in headless Chromium (Debian's `chromium`, driven by puppeteer-core; no
// browser is downloaded). Not part of `npm test`: it needs the browser and runs for about a minute (it waits for
// a minute boundary so the per-minute plots have two minutes of data).
export default defineConfig({
  plugins: [swcPlugin],
  test: {
    pool: 'forks',
    setupFiles: ['reflect-metadata'],
    include: ['test/browser/**/*.browser-spec.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    maxWorkers: 1,
  },
});
