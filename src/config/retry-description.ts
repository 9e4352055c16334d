/**
 * The description of a retry-like setting (retry, lease, poll, interval, timeout, give-up), written beside its
 * declaration: `@Retried({...})` on a config class field, `constantSetting(...)` next to a code constant. Each
 * module gathers its own in `src/<feature>/<feature>.retries.ts`; src/retries/ renders docs/RETRIES.md from them.
 */

/** The section of docs/RETRIES.md a setting is listed in. */
export type RetryModule =
  'upstream' | 'checkout' | 'transactions' | 'catalog-sync' | 'webhooks' | 'service' | 'sandbox';

export type SettingUnit = 'ms' | 's' | 'count' | 'rps' | 'factor' | 'flag';

/** One setting: an environment variable (value from the config object it was read from) or a code constant. */
export interface RetryDescription {
  name: string;
  source: 'env' | 'constant';
  module: RetryModule;
  value: number | boolean;
  unit: SettingUnit;
  /** What it bounds (or paces). */
  bounds: string;
  /** Where it is read. */
  where: string;
}

/** What the declaration site says; `where` of a variable names the code that reads it (its config file is added). */
export type SettingText = Pick<RetryDescription, 'unit' | 'bounds' | 'where'>;

const described = new WeakMap<object, Map<string, SettingText>>();

/** Marks a config class field as a retry-like setting, with what it bounds and where it is read. */
export function Retried(text: SettingText): PropertyDecorator {
  return (target, key) => {
    const fields = described.get(target.constructor) ?? new Map<string, SettingText>();
    fields.set(String(key), text);
    described.set(target.constructor, fields);
  };
}

/** The names of the fields of `cls` marked @Retried, in declaration order. */
export function retriedFields(cls: abstract new () => object): string[] {
  return [...(described.get(cls)?.keys() ?? [])];
}

/**
 * Every @Retried field of `config` with its value in that object, listed under `module`; `where` becomes
 * `src/config/<file> → <where>`.
 */
export function describedSettings(config: object, module: RetryModule, file: string): RetryDescription[] {
  const fields = described.get(config.constructor) ?? new Map<string, SettingText>();
  return [...fields].map(([name, text]) => {
    const value: unknown = (config as Record<string, unknown>)[name];
    if (typeof value !== 'number' && typeof value !== 'boolean')
      throw new TypeError(`${name} is not a number or boolean`);
    return { name, source: 'env', module, value, ...text, where: `src/config/${file} → ${text.where}` };
  });
}

/** A code constant's description (`where` names its file and identifier). */
export function constantSetting(
  module: RetryModule,
  name: string,
  value: number,
  text: SettingText,
): RetryDescription {
  return { name, source: 'constant', module, value, ...text };
}
