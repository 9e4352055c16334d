import { describe, expect, it } from 'vitest';
import { escapeHtml, linePlot, shortNumber } from './status.plot';

const at = (minute: number): string => new Date(Date.UTC(2026, 10, 27, 12, minute)).toISOString();

describe(linePlot.name, () => {
  it('draws one path per series through every point, with the number of points it drew', () => {
    const sut = linePlot('Orders / min', [
      { label: 'confirmed', points: [0, 1, 2].map((m) => ({ at: at(m), value: m * 10 })) },
      { label: 'rejected', points: [0, 1, 2].map((m) => ({ at: at(m), value: 1 })) },
    ]);
    const paths = [
      ...sut.matchAll(/<path class="line s(\d)" data-label="([^"]+)" data-points="(\d+)" d="([^"]*)"/g),
    ];
    expect(paths.map((m) => [m[2], m[3]])).toEqual([
      ['confirmed', '3'],
      ['rejected', '3'],
    ]);
    expect(paths[0]?.[4]).toMatch(/^M[\d.]+ [\d.]+ L[\d.]+ [\d.]+ L[\d.]+ [\d.]+$/);
    expect(sut).toContain('12:00');
    expect(sut).toContain('12:02 UTC');
  });

  it('puts the largest value highest and 0 at the bottom of the plot', () => {
    const sut = linePlot('x', [
      {
        label: 'a',
        points: [
          { at: at(0), value: 0 },
          { at: at(1), value: 50 },
        ],
      },
    ]);
    const [, y0, y1] = /d="M[\d.]+ ([\d.]+) L[\d.]+ ([\d.]+)"/.exec(sut) ?? [];
    expect(Number(y1)).toBeLessThan(Number(y0));
    expect(Number(y0)).toBe(140);
  });

  it('breaks the line at a missing value and draws a lone point as a dot', () => {
    const sut = linePlot('p99', [
      {
        label: 'p99',
        points: [
          { at: at(0), value: 5 },
          { at: at(1), value: null },
          { at: at(2), value: 7 },
          { at: at(3), value: 8 },
        ],
      },
    ]);
    expect(sut).toContain('data-points="3"');
    expect((/d="([^"]*)"/.exec(sut)?.[1] ?? '').match(/M/g)).toHaveLength(1);
    expect(sut.match(/<circle/g)).toHaveLength(1);
  });

  it('says there is no data rather than drawing nothing silently', () => {
    expect(linePlot('empty', [{ label: 'a', points: [] }])).toContain('no data yet');
  });

  it('escapes labels and titles (an operation name or version is never markup)', () => {
    const sut = linePlot('<b>t</b>', [{ label: '"><script>x</script>', points: [] }]);
    expect(sut).not.toContain('<script>');
    expect(sut).not.toContain('<b>');
  });
});

describe(shortNumber.name, () => {
  it('keeps axis labels short', () => {
    expect(shortNumber(0)).toBe('0');
    expect(shortNumber(1234)).toBe('1.2k');
    expect(shortNumber(45_000)).toBe('45k');
    expect(shortNumber(2_500_000)).toBe('2.5M');
    expect(shortNumber(0.25)).toBe('0.3');
  });
});

describe(escapeHtml.name, () => {
  it('escapes the five HTML-special characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});
