import type { PoolClient } from 'pg';

interface CopyConnection {
  query(text: string): void;
  /** The connection's socket. */
  stream: { write(chunk: Buffer): boolean };
  endCopyFrom(): void;
}

/** Frontend message CopyData ('d'). */
const COPY_DATA = 0x64;

/**
 * `COPY … FROM STDIN` of in-memory text (a string or UTF-8 bytes) through pg's Submittable interface, so no
 * streaming package is needed. Resolves with the rows copied. The bytes go to the socket as they are, in one
 * CopyData message: pg's sendCopyFromChunk would first copy them into a fresh buffer 1.5x their size (a batch of
 * 5,000 rows is ~5 MB of garbage per batch). The socket is not corked: with it corked around these writes, a
 * walk's COPY now and then never completed (live-catalog-replicas.e2e: a hot walk left running, 3 of 6 runs; 0 of
 * 4 without) — so the text must come as one buffer, not as pieces: every uncorked write is a system call of its
 * own (session 21's pieces, two per row, made a backfill 25 % slower; docs/BENCHMARKS.md "Session 22"). The
 * caller may reuse the bytes once this resolves: PostgreSQL answers only after reading every byte.
 */
export function copyFrom(client: PoolClient, sql: string, data: string | Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    let rows = 0;
    let failed = false;
    const submittable = {
      submit(connection: CopyConnection): void {
        connection.query(sql);
      },
      handleCopyInResponse(connection: CopyConnection): void {
        const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
        const header = Buffer.allocUnsafe(5);
        header[0] = COPY_DATA;
        header.writeInt32BE(bytes.length + 4, 1);
        const { stream } = connection;
        stream.write(header);
        stream.write(bytes);
        connection.endCopyFrom();
      },
      handleCommandComplete(message: { text?: string }): void {
        rows = Number(/(\d+)$/.exec(message.text ?? '')?.[1] ?? 0);
      },
      handleError(error: Error): void {
        failed = true;
        reject(error);
      },
      handleReadyForQuery(): void {
        if (!failed) resolve(rows);
      },
      handleEmptyQuery(): void {},
      handleRowDescription(): void {},
      handleDataRow(): void {},
      handlePortalSuspended(): void {},
      handleCopyData(): void {},
    };
    void client.query(submittable as never);
  });
}

const COPY_SPECIAL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** One value in COPY text format (`\N` for null). */
export function copyText(value: string | bigint | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'bigint') return value.toString();
  return value.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c] ?? c);
}

/**
 * copyText for JSON text: the same escaping, after a quick check (four native scans, much cheaper than the
 * regular expression) that finds nothing to escape in most items: JSON.stringify output never holds a raw
 * tab, newline or carriage return, and most items hold no backslash.
 */
export function copyJsonText(json: string): string {
  return json.includes('\\') || json.includes('\n') || json.includes('\t') || json.includes('\r')
    ? json.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c] ?? c)
    : json;
}
