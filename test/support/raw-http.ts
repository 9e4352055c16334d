import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `bytes` on one loopback connection (leaving it open, like a stalled client) and resolves with
 * everything the server answers until it closes the connection. Bounded by a 5 s socket timeout.
 */
export function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

/** Splits a raw HTTP/1.1 answer into status, lower-cased headers and body. */
export function parseRawAnswer(answer: string): RawAnswer {
  const split = answer.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = answer.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine?.split(' ')[1]), headers, body: answer.slice(split + 4) };
}
