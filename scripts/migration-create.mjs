#!/usr/bin/env node
// npm run migration:create -- <PascalName>: writes migrations/<epoch-ms>-<PascalName>.ts and registers it
// in src/database/migrations.ts (migrations are listed explicitly, never globbed).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const name = process.argv[2];
if (!name || !/^[A-Z][A-Za-z0-9]+$/.test(name)) {
  console.error('usage: npm run migration:create -- <PascalCaseName>');
  process.exit(2);
}
const stamp = Date.now();
const className = `${name}${stamp}`;
const file = `migrations/${stamp}-${name}.ts`;
writeFileSync(
  file,
  `import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ${className} implements MigrationInterface {
  name = '${className}';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(\`\`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(\`\`);
  }
}
`,
);
const registry = 'src/database/migrations.ts';
let source = readFileSync(registry, 'utf8');
const importLine = `import { ${className} } from '../../migrations/${stamp}-${name}';\n`;
const lastImport = source.lastIndexOf('\nimport ');
const insertAt = lastImport === -1 ? 0 : source.indexOf('\n', lastImport + 1) + 1;
source = source.slice(0, insertAt) + importLine + source.slice(insertAt);
source = source.replace(/,?\s*\];\s*$/, `, ${className}];\n`);
writeFileSync(registry, source);
// Keep `npm run check` green: the registry line grows with every migration.
execFileSync(process.execPath, ['node_modules/prettier/bin/prettier.cjs', '--write', file, registry], {
  stdio: 'ignore',
});
console.log(`created ${file} and registered ${className}`);
