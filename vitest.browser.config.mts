import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// `npm run test:browser`: the status page in headless Chromium (Debian's `chromium`, driven by puppeteer-core; no
// browser is downloaded). Not part of `npm test`: it needs the browser and runs for about a minute (it waits for
// a minute boundary so the per-minute plots have two minutes of data).
const swcPlugin = swc.vite({
  module: { type: 'es6' },
  jsc: {
    target: 'es2023',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
  },
});

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
