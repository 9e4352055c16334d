import type { PoolClient } from 'pg';

interface CopyConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

/**
 * `COPY … FROM STDIN` of in-memory text (a string, or UTF-8 bytes, which pg copies into its own message
 * buffer at once, so the caller may reuse them after this resolves) through pg's Submittable interface, so
 * no streaming package is needed. Resolves with the rows copied.
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
        connection.sendCopyFromChunk(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
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
