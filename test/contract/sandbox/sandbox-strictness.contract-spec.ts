import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { TestSandbox } from './sandbox.harness';

/** Sends `raw` on a loopback socket and collects what comes back until the server closes it (bounded). */
function rawExchange(url: string, raw: string, timeoutMs: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no close within ${timeoutMs} ms; got: ${answer}`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
    socket.on('error', () => undefined);
    socket.write(raw);
  });
}

/** Issue 23, item 12: the sandbox as strict as the service (request timeouts). */
describe('sandbox strictness', () => {
  let sut: TestSandbox | undefined;
  afterEach(() => sut?.close());

  it('answers 408 to a request whose body never finishes, and closes the connection', async () => {
    sut = await TestSandbox.start({ requestTimeoutMs: 300 });
    const started = Date.now();
    const answer = await rawExchange(
      sut.handle.url,
      `POST /submissions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"signed`,
      5_000,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it('still serves a slow but complete request within the timeout', async () => {
    sut = await TestSandbox.start({ requestTimeoutMs: 2_000 });
    const res = await fetch(`${sut.handle.url}/indexer/events/upcoming?limit=1`, {
      headers: { 'x-api-key': sut.admin.apiKey },
    });
    expect(res.status).toBe(200);
  });
});
