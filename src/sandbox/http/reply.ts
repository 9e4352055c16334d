/** A response a route handler decided on; the operation wrapper sends it (or loses it, under faults). */
export type SandboxReply =
  | {
      kind: 'json';
      status: number;
      body: string | Buffer;
      headers?: Record<string, string>;
      /** Called once the body has been handed to the OS (its buffer may then be reused); never if dropped. */
      sent?: () => void;
    }
  | { kind: 'text'; status: number; body: string; headers?: Record<string, string> }
  | { kind: 'empty'; status: number; headers?: Record<string, string> };

export function jsonReply(status: number, value: unknown): SandboxReply {
  return { kind: 'json', status, body: JSON.stringify(value) };
}

/**
 * Error bodies follow no single shape on purpose (contract part 7): validation and permission errors are
 * JSON `{ error, message, details? }`, some 401s are plain text, others empty. docs/sandbox.md has the table.
 */
export function problemReply(
  status: number,
  error: string,
  message: string,
  details?: unknown,
): SandboxReply {
  return jsonReply(status, details === undefined ? { error, message } : { error, message, details });
}

export function textReply(status: number, body: string): SandboxReply {
  return { kind: 'text', status, body };
}

export function emptyReply(status: number): SandboxReply {
  return { kind: 'empty', status };
}
