/**
 * Loaded with `node --require ./dist/src/tracing/tracing.register.js dist/src/main.js` (npm start), before
 * Nest or any instrumented module: http, pg and Nest are patched as they are first required.
 *
 * Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; when off it returns
 * before requiring anything: no SDK, no instrumentation, not even @opentelemetry/api is loaded by this file,
 * and the api the features call stays its own no-op (docs/tracing.md, "cost when off"). This file imports
 * nothing at the top for that reason; the SDK comes in through `load` only when tracing is on.
 */

type Env = Record<string, string | undefined>;

/** Whether the environment turns tracing on (the standard OTLP endpoint variables; OTEL_SDK_DISABLED wins). */
export function tracingRequested(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** Starts the SDK when the environment asks for it; returns whether it did. */
export function registerTracing(
  env: Env,
  load: () => { startTracing(): unknown } = () => require('./tracing.sdk') as typeof import('./tracing.sdk'),
): boolean {
  if (!tracingRequested(env)) return false;
  load().startTracing();
  return true;
}

registerTracing(process.env);
