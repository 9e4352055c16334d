#!/usr/bin/env node
// npm run migration:create -- <PascalName>: writes migrations/<epoch-ms>-<PascalName>.ts and registers it
// in src/database/migrations.ts (migrations are listed explicitly, never globbed).
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
source = source.replace(
  /(\nconst|\n\/\*\*)/,
  `\nimport { ${className} } from '../../migrations/${stamp}-${name}';$1`,
);
source = source.replace(/\];\s*$/, `, ${className}];\n`);
writeFileSync(registry, source);
console.log(`created ${file} and registered ${className}`);
