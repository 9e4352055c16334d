import { num, type Bound } from '../common/worst-case';
import type { RetryDescription } from '../config/retry-description';

/** Markdown helpers of docs/RETRIES.md: no locale, no clock, so the page is the same on every machine. */

function round(x: number): string {
  return String(Math.round(x * 10) / 10);
}

/** Markdown inline code. */
export function code(text: string): string {
  return `\`${text}\``;
}

/** A duration for people: "500 ms", "2.5 s", "4 min", "1 h", "34.7 days". */
export function human(ms: number): string {
  if (ms < 1000) return `${num(ms)} ms`;
  if (ms < 120_000) return `${round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${round(ms / 60_000)} min`;
  if (ms < 172_800_000) return `${round(ms / 3_600_000)} h`;
  return `${round(ms / 86_400_000)} days`;
}

export function valueText(setting: RetryDescription): string {
  if (typeof setting.value === 'boolean') return String(setting.value);
  switch (setting.unit) {
    case 'ms':
      return setting.value >= 1000
        ? `${num(setting.value)} ms (${human(setting.value)})`
        : `${num(setting.value)} ms`;
    case 's':
      return `${num(setting.value)} s`;
    case 'rps':
      return `${num(setting.value)}/s`;
    case 'factor':
    case 'count':
    case 'flag':
      break;
  }
  return num(setting.value);
}

export function boundText(bound: Bound, unit: 'ms' | 'count'): string {
  if (bound.value === null) return `**${bound.arithmetic}**`;
  const figure = unit === 'ms' ? `**${human(bound.value)}**` : `**${num(bound.value)}**`;
  return `${figure}: ${bound.arithmetic}`;
}

/** A markdown table, padded as prettier pads it (so `npm run format` leaves the file alone). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 3)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Collects paragraphs: each call adds its lines joined, then a blank line. */
export class Page {
  private readonly out: string[] = [];

  para(...lines: string[]): void {
    this.out.push(lines.join('\n'), '');
  }

  text(): string {
    return `${this.out.join('\n').trimEnd()}\n`;
  }
}
