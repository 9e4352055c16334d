import type { ProcessGroup } from './processes';

/**
 * Replica log messages counted over the run (every process, every line): evidence that the disruptions did
 * what they are for — leases taken over after a kill or a freeze, a resumed replica's stale writes refused —
 * and any error the service logged while answering well.
 */
const EVENTS: Record<string, string> = {
  'leases taken over': '"durable work lease expired, taken over"',
  'stale writes fenced off': '"durable work fenced off (lease lost)"',
  'work paused, database unavailable': '"durable work paused: database unavailable"',
  'checkout steps interrupted, database unavailable': '"checkout step interrupted: database unavailable"',
  'work items interrupted, database unavailable': '"durable work item interrupted: database unavailable"',
  'checkout steps crashed': '"checkout step crashed"',
  'work items failed': '"durable work item failed"',
  'unhandled errors': '"unhandled error"',
};
/** The events above logged as errors: counted by message, and the first few lines kept for the report. */
const ERRORS = new Set(['checkout steps crashed', 'work items failed', 'unhandled errors']);

/** Watches the replicas' output (all starts) for EVENTS. */
export class ReplicaLogWatch {
  private readonly counts: Record<string, number> = Object.fromEntries(
    Object.keys(EVENTS).map((k) => [k, 0]),
  );
  private readonly errorKinds: Record<string, number> = {};
  private readonly errorLines: string[] = [];

  constructor(group: ProcessGroup) {
    group.watchLines((name, line) => {
      if (name.startsWith('replica-')) this.see(name, line);
    });
  }

  private see(name: string, line: string): void {
    for (const [what, msg] of Object.entries(EVENTS)) {
      if (!line.includes(msg)) continue;
      this.counts[what]++;
      if (!ERRORS.has(what)) continue;
      const kind = `${what}: ${errorMessageOf(line)}`;
      this.errorKinds[kind] = (this.errorKinds[kind] ?? 0) + 1;
      if (this.errorLines.length < 6)
        this.errorLines.push(`${name} ${new Date().toISOString()}: ${line.slice(0, 700)}`);
    }
  }

  figures(): {
    replicaLog: Record<string, number>;
    replicaErrorKinds: Record<string, number>;
    replicaErrors: string[];
  } {
    return {
      replicaLog: { ...this.counts },
      replicaErrorKinds: { ...this.errorKinds },
      replicaErrors: [...this.errorLines],
    };
  }
}

/** The logged error's message with numbers blanked (ports, ids), so alike errors count together. */
function errorMessageOf(line: string): string {
  let message = 'no message';
  try {
    const parsed = JSON.parse(line) as { err?: { message?: unknown } };
    if (typeof parsed.err?.message === 'string') message = parsed.err.message;
  } catch {
    message = 'not a JSON log line';
  }
  return message.replaceAll(/\d+/g, 'N').slice(0, 100);
}
