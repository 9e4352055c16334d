import type { ReportSeries } from './status.report';

/** Plot geometry in SVG user units (the SVG scales to the panel's width). */
const WIDTH = 400;
const HEIGHT = 160;
const LEFT = 40;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 20;

export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** A short number for an axis: 1234 → 1.2k. */
export function shortNumber(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1_000_000) return `${(value / 1_000_000).toFixed(1)}M`;
  if (abs >= 10_000) return `${Math.round(value / 1000)}k`;
  if (abs >= 1000) return `${(value / 1000).toFixed(1)}k`;
  if (Number.isInteger(value)) return String(value);
  return value.toFixed(abs < 10 ? 1 : 0);
}

const hhmm = (at: number): string => new Date(at).toISOString().slice(11, 16);

/**
 * A line plot as hand-written SVG: one path per series (runs of points; a null value breaks the line, a lone
 * point is a dot), a y axis from 0 to the largest value, the first and last time (UTC) under the x axis, and the
 * legend as HTML under it. Each path says how many points it draws (`data-points`), for the browser test.
 */
export function linePlot(title: string, series: readonly ReportSeries[], unit = ''): string {
  const times = series.flatMap((s) => s.points.map((p) => Date.parse(p.at)));
  const values = series.flatMap((s) => s.points.map((p) => p.value).filter((v): v is number => v !== null));
  const drawn = values.length;
  const x0 = times.length > 0 ? Math.min(...times) : 0;
  const x1 = times.length > 0 ? Math.max(...times) : 1;
  const yMax = Math.max(1, ...values) * 1.1;
  const x = (t: number): number => LEFT + ((t - x0) / Math.max(1, x1 - x0)) * (WIDTH - LEFT - RIGHT);
  const y = (v: number): number => TOP + (1 - v / yMax) * (HEIGHT - TOP - BOTTOM);
  const paths = series.map((s, i) => {
    let d = '';
    let count = 0;
    const dots: string[] = [];
    let run: [number, number][] = [];
    const flush = (): void => {
      if (run.length === 1) {
        const [px, py] = run[0] ?? [0, 0];
        dots.push(`<circle class="dot s${i % 6}" cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="2.5"/>`);
      } else if (run.length > 1) {
        d +=
          run.map(([px, py], k) => `${k === 0 ? 'M' : 'L'}${px.toFixed(1)} ${py.toFixed(1)}`).join(' ') + ' ';
      }
      run = [];
    };
    for (const point of s.points) {
      if (point.value === null) {
        flush();
        continue;
      }
      count++;
      run.push([x(Date.parse(point.at)), y(point.value)]);
    }
    flush();
    return (
      `<path class="line s${i % 6}" data-label="${escapeHtml(s.label)}" data-points="${count}" d="${d.trim()}"/>` +
      dots.join('')
    );
  });
  const grid = [0, 0.5, 1]
    .map((f) => {
      const v = (yMax / 1.1) * f;
      const gy = y(v).toFixed(1);
      return (
        `<line class="grid" x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${gy}" y2="${gy}"/>` +
        `<text class="axis" x="${LEFT - 4}" y="${gy}" text-anchor="end" dominant-baseline="middle">${shortNumber(v)}</text>`
      );
    })
    .join('');
  const xLabels =
    times.length > 0
      ? `<text class="axis" x="${LEFT}" y="${HEIGHT - 4}">${hhmm(x0)}</text>` +
        `<text class="axis" x="${WIDTH - RIGHT}" y="${HEIGHT - 4}" text-anchor="end">${hhmm(x1)} UTC</text>`
      : '';
  const empty =
    drawn === 0
      ? `<text class="axis" x="${WIDTH / 2}" y="${HEIGHT / 2}" text-anchor="middle">no data yet</text>`
      : '';
  const legend = series
    .map((s, i) => `<li><span class="key s${i % 6}"></span>${escapeHtml(s.label)}</li>`)
    .join('');
  return (
    `<figure class="plot" data-plot="${escapeHtml(title)}">` +
    `<figcaption>${escapeHtml(title)}${unit ? ` <small>(${escapeHtml(unit)})</small>` : ''}</figcaption>` +
    `<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escapeHtml(title)}" preserveAspectRatio="none">` +
    grid +
    xLabels +
    paths.join('') +
    empty +
    `</svg><ul class="legend">${legend}</ul></figure>`
  );
}
