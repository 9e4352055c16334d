import { describe, expect, it, vi } from 'vitest';
import { registerTracing, tracingRequested } from './tracing.register';

function loader() {
  const startTracing = vi.fn<() => void>();
  return { load: vi.fn<() => { startTracing: () => void }>(() => ({ startTracing })), startTracing };
}

describe(registerTracing.name, () => {
  it('without an OTLP endpoint does not load the SDK at all', () => {
    const sut = loader();
    expect(registerTracing({}, sut.load)).toBe(false);
    expect(registerTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }, sut.load)).toBe(false);
    expect(registerTracing({ OTEL_SERVICE_NAME: 'x' }, sut.load)).toBe(false);
    expect(sut.load).not.toHaveBeenCalled();
  });

  it('with an endpoint loads the SDK once and starts it', () => {
    const sut = loader();
    expect(registerTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, sut.load)).toBe(true);
    expect(sut.load).toHaveBeenCalledTimes(1);
    expect(sut.startTracing).toHaveBeenCalledTimes(1);
  });

  it('honours the traces-only endpoint and OTEL_SDK_DISABLED', () => {
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(
      true,
    );
    expect(
      tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBe(false);
  });
});
