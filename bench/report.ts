export interface BenchReport {
  name: string;
  rows: [string, string][];
  targets: { what: string; ok: boolean }[];
}

export function printReport(report: BenchReport): boolean {
  const width = Math.max(...report.rows.map(([k]) => k.length));
  console.log(`\n## ${report.name}`);
  for (const [key, value] of report.rows) console.log(`  ${key.padEnd(width)}  ${value}`);
  for (const target of report.targets) console.log(`  [${target.ok ? 'PASS' : 'FAIL'}] ${target.what}`);
  return report.targets.every((t) => t.ok);
}
