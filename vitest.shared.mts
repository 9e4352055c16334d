import swc from 'unplugin-swc';

// SWC keeps the decorator metadata that Nest's DI needs (esbuild drops it). Shared by vitest.config.mts
// (`npm test`) and vitest.browser.config.mts (`npm run test:browser`).
export const swcPlugin = swc.vite({
  module: { type: 'es6' },
  jsc: {
    target: 'es2023',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
  },
});
