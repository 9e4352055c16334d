import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadWebhooksConfig } from '../../src/config/webhooks.config';
import { AddressPolicy } from '../../src/webhooks/address.policy';
import type { ResolvedAddress } from '../../src/webhooks/host.resolver';
import { REFUSED_REASON, WebhookSender } from '../../src/webhooks/webhook.sender';
import { WebhookReceiver } from '../support/webhook-receiver';

/** A DNS that answers what the test says, per call (a rebinding server changes its answer between calls). */
class ScriptedResolver {
  calls = 0;
  constructor(private readonly answers: (call: number) => string[]) {}
  resolve(host: string): Promise<ResolvedAddress[]> {
    const call = ++this.calls;
    if (!host.endsWith('.test')) return Promise.reject(new Error(`unexpected lookup of ${host}`));
    return Promise.resolve(
      this.answers(call).map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  }
}

/**
 * The webhook sender against a real receiver on loopback. Every address a broken guard could connect to in these
 * tests is a local one (0.0.0.0 and 127.x reach this machine): a refusal is shown by the receiver getting nothing.
 */
describe(WebhookSender.name, () => {
  let receiver: WebhookReceiver;
  let other: WebhookReceiver;
  const config = loadWebhooksConfig({ WEBHOOKS_DELIVERY_TIMEOUT_MS: '1000', WEBHOOKS_LEASE_MS: '5000' });
  const sender = (resolver: ScriptedResolver | null, production = false) =>
    new WebhookSender(resolver ?? new ScriptedResolver(() => []), new AddressPolicy(production), config);
  const headers = { 'content-type': 'application/json', 'webhook-id': 'evt_1' };

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    other = await WebhookReceiver.start();
  });
  afterEach(() => {
    receiver.received.length = 0;
    other.received.length = 0;
    receiver.answer = () => 200;
    receiver.releaseHeld();
  });
  afterAll(async () => {
    await receiver?.close();
    await other?.close();
  });

  it('POSTs the body with the headers and reports the status', async () => {
    const sut = sender(null);

    const outcome = await sut.send(receiver.url, headers, '{"a":1}');

    expect(outcome).toMatchObject({ kind: 'response', status: 200, excerpt: 'ok' });
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]?.body).toBe('{"a":1}');
    expect(receiver.received[0]?.headers['webhook-id']).toBe('evt_1');
  });

  it('never follows a redirect: a 302 is the outcome, its Location receives nothing', async () => {
    receiver.answer = () => ({ status: 302, headers: { location: other.url } });
    const sut = sender(null);

    const outcome = await sut.send(receiver.url, headers, '{}');

    expect(outcome).toMatchObject({ kind: 'response', status: 302 });
    expect(other.received).toHaveLength(0);
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    receiver.answer = () => 'hold';
    const sut = sender(null);

    const outcome = await sut.send(receiver.url, headers, '{}');

    expect(outcome).toMatchObject({ kind: 'error', reason: 'no answer within 1000 ms' });
  });

  it('refuses a host resolving to a refused address, without connecting', async () => {
    const sut = sender(new ScriptedResolver(() => ['0.0.0.0']));

    const outcome = await sut.send(`http://metadata.test:${receiver.port}/hooks`, headers, '{}');

    // The delivery log (the tenant's) names no address; the server log's detail does.
    expect(outcome).toMatchObject({
      kind: 'refused',
      reason: REFUSED_REASON,
      detail: expect.stringMatching(/0\.0\.0\.0/) as string,
    });
    expect(outcome.kind === 'refused' && outcome.reason).not.toMatch(/0\.0\.0\.0/);
    expect(receiver.received).toHaveLength(0);
  });

  it('tells the delivery log a generic reason for a refused connection or an unknown host; the detail is apart', async () => {
    const refused = await sender(null).send('http://127.0.0.1:9/hooks', headers, '{}');
    expect(refused).toMatchObject({
      kind: 'error',
      reason: 'connection refused',
      detail: expect.stringMatching(/ECONNREFUSED 127\.0\.0\.1:9/) as string,
    });

    const unknown = new WebhookSender(
      {
        resolve: () =>
          Promise.reject(
            Object.assign(new Error('getaddrinfo ENOTFOUND db.internal'), { code: 'ENOTFOUND' }),
          ),
      },
      new AddressPolicy(false),
      config,
    );
    const outcome = await unknown.send('https://db.internal/hooks', headers, '{}');
    expect(outcome).toMatchObject({ kind: 'error', reason: 'host name not resolved' });
    expect(JSON.stringify(outcome.kind === 'error' && outcome.reason)).not.toMatch(/internal|ENOTFOUND/);
  });

  it('refuses a host when any of its addresses is refused', async () => {
    const sut = sender(new ScriptedResolver(() => ['127.0.0.1', '169.254.169.254']));

    const outcome = await sut.send(`http://mixed.test:${receiver.port}/hooks`, headers, '{}');

    expect(outcome.kind).toBe('refused');
    expect(receiver.received).toHaveLength(0);
  });

  it('checks at every send and connects to the address it checked (DNS rebinding)', async () => {
    const resolver = new ScriptedResolver((call) => (call === 1 ? ['127.0.0.1'] : ['0.0.0.0']));
    const sut = sender(resolver);
    const url = `http://rebind.test:${receiver.port}/hooks`;

    // Node's own resolver cannot resolve rebind.test: arriving proves the connection used the checked address.
    expect(await sut.send(url, headers, '{}')).toMatchObject({ kind: 'response', status: 200 });
    expect(await sut.send(url, headers, '{}')).toMatchObject({ kind: 'refused' });
    expect(receiver.received).toHaveLength(1);
    expect(resolver.calls).toBe(2);
  });

  it('in production refuses loopback, literal or resolved', async () => {
    const sut = sender(new ScriptedResolver(() => ['127.0.0.1']), true);

    expect((await sut.send(receiver.url, headers, '{}')).kind).toBe('refused');
    expect((await sut.send(`http://local.test:${receiver.port}/`, headers, '{}')).kind).toBe('refused');
    expect(receiver.received).toHaveLength(0);
  });
  describe('kept-alive connections', () => {
    /** A receiver that tells which connection each request came on (its client port) and can drop the 2nd. */
    let server: Server;
    let ports: number[] = [];
    let dropSecondOnFirstConnection = false;
    let url = '';
    beforeAll(async () => {
      server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          ports.push(req.socket.remotePort ?? 0);
          // As if the receiver had closed the idle connection just as the next request was written on it.
          if (dropSecondOnFirstConnection && ports.length === 2 && ports[1] === ports[0]) {
            req.socket.destroy();
            return;
          }
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    });
    afterEach(() => {
      ports = [];
      dropSecondOnFirstConnection = false;
      server.closeAllConnections();
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('sends one after another on one connection', async () => {
      const sut = sender(null);

      for (let i = 0; i < 3; i++) expect(await sut.send(url, headers, '{}')).toMatchObject({ status: 204 });

      expect(ports).toHaveLength(3);
      expect(new Set(ports).size).toBe(1);
      sut.onApplicationShutdown();
    });

    it('a kept connection the receiver closed is not its failure: one try, delivered on a new connection', async () => {
      dropSecondOnFirstConnection = true;
      const sut = sender(null);

      expect(await sut.send(url, headers, '{}')).toMatchObject({ status: 204 });
      expect(await sut.send(url, headers, '{}')).toMatchObject({ kind: 'response', status: 204 });

      // The first connection got the dropped request; the answer came on another one.
      expect(ports).toHaveLength(3);
      expect(ports[2]).not.toBe(ports[0]);
      sut.onApplicationShutdown();
    });

    it('a host that resolves to another (allowed) address gets a new connection there, never the kept one', async () => {
      const port = (server.address() as AddressInfo).port;
      const resolver = new ScriptedResolver((call) => (call === 1 ? ['127.0.0.1'] : ['127.0.0.2']));
      const sut = sender(resolver);
      const rebinding = `http://moving.test:${port}/hooks`;

      expect(await sut.send(rebinding, headers, '{}')).toMatchObject({ status: 204 });
      // The receiver listens on 127.0.0.1 only: the connection to 127.0.0.2 is refused, the kept one is not used.
      expect(await sut.send(rebinding, headers, '{}')).toMatchObject({
        kind: 'error',
        reason: 'connection refused',
      });
      expect(ports).toHaveLength(1);
      sut.onApplicationShutdown();
    });
  });
});
