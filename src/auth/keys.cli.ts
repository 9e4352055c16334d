import 'reflect-metadata';
import { runKeysCommand } from './keys.commands';

/** `npm run keys -- create|list|revoke|generate` (see KEYS_USAGE). Keys go to stdout only. */
runKeysCommand(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
}).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`keys: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
