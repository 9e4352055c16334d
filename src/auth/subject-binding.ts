import type { FastifyRequest } from 'fastify';
import { AppError } from '../common/app-error';
import { isSafeSubject, subjectMessage } from '../common/subject';
import { validationFailed } from '../common/validation';
import type { Scope } from './scopes';

/** Whose custodial wallet a subject names: a user's or an integrator's (separate namespaces upstream). */
export type SubjectWallet = 'user' | 'integrator';

/**
 * Which subjects a key may act for, per wallet kind, set when the key is issued. `null` on a client:
 * unbound, it may name any subject (the behaviour before bindings existed).
 */
export interface SubjectBinding {
  userSubjects: string[];
  integratorSubjects: string[];
}

/** Where a route takes the subject it acts for: a body field or a path parameter, and its wallet kind. */
export interface SubjectDeclaration {
  wallet: SubjectWallet;
  in: 'body' | 'path';
  field: string;
}

/** At most this many patterns per wallet kind. */
export const BINDING_MAX_PATTERNS = 100;
/**
 * An exact subject (common/subject.ts: 1..128 of `A-Z a-z 0-9 . _ : @ -`, no `..`), or such a prefix followed
 * by one trailing `*`, or `*` alone (every subject of that wallet kind).
 */
export const SUBJECT_PATTERN = /^(?:[A-Za-z0-9._:@-]{1,128}\*?|\*)$/;
export const SUBJECT_PATTERN_MESSAGE =
  'each pattern must be an exact subject (1 to 128 characters of A-Z a-z 0-9 . _ : @ -, no "..") or such a ' +
  'prefix followed by one trailing *';

export function isSubjectPattern(pattern: string): boolean {
  return SUBJECT_PATTERN.test(pattern) && !pattern.includes('..') && pattern !== '.';
}

/** Does one pattern cover `subject`? A trailing `*` matches any rest (the empty rest included). */
export function patternMatches(pattern: string, subject: string): boolean {
  return pattern.endsWith('*') ? subject.startsWith(pattern.slice(0, -1)) : subject === pattern;
}

/** May a client with `binding` act for `subject`'s wallet of kind `wallet`? Unbound: always. */
export function bindingAllows(
  binding: SubjectBinding | null,
  wallet: SubjectWallet,
  subject: string,
): boolean {
  if (binding === null) return true;
  const patterns = wallet === 'user' ? binding.userSubjects : binding.integratorSubjects;
  return patterns.some((pattern) => patternMatches(pattern, subject));
}

/**
 * The explicit opt-in that leaves a write key unbound (`anySubject: true` on the API, `--any-subject` in the
 * CLI): stored as no binding, told apart from "nothing said" only when the key is issued.
 */
export const ANY_SUBJECT = 'any-subject';

/** What a key is issued with: a binding, the explicit any-subject opt-in, or nothing (null). */
export type BindingRequest = SubjectBinding | typeof ANY_SUBJECT | null;

/** Scopes whose routes act for a subject's wallet (they declare it to the access guard). */
export const SUBJECT_SCOPES: readonly Scope[] = ['listings:write', 'orders:write', 'transactions:write'];

export const UNBOUND_WRITE_KEY_MESSAGE =
  `a key with ${SUBJECT_SCOPES.join(', ')} acts for subjects' wallets: bind it to subjects or opt in to any ` +
  'subject explicitly';

/** The binding a key is stored with (the any-subject opt-in and nothing are both stored unbound). */
export function storedBinding(request: BindingRequest): SubjectBinding | null {
  return request === ANY_SUBJECT ? null : request;
}

/**
 * Why a binding cannot be given to a key with these scopes (undefined: it can). An `admin` key can issue
 * itself an unbound key, so binding one would promise a limit it does not have. A non-admin key with a scope
 * that acts for subjects (SUBJECT_SCOPES) needs a binding or the explicit ANY_SUBJECT opt-in: an unbound
 * `orders:write` key can buy with any subject's wallet.
 */
export function bindingProblem(scopes: readonly Scope[], request: BindingRequest): string | undefined {
  if (request === ANY_SUBJECT) return undefined;
  const binding = request;
  if (binding === null) {
    const admin = scopes.includes('admin');
    return !admin && scopes.some((s) => SUBJECT_SCOPES.includes(s)) ? UNBOUND_WRITE_KEY_MESSAGE : undefined;
  }
  if (scopes.includes('admin')) return 'an admin key cannot be bound to subjects (it can issue unbound keys)';
  for (const patterns of [binding.userSubjects, binding.integratorSubjects]) {
    if (patterns.length > BINDING_MAX_PATTERNS) return `at most ${BINDING_MAX_PATTERNS} patterns per list`;
    if (!patterns.every(isSubjectPattern)) return SUBJECT_PATTERN_MESSAGE;
  }
  return undefined;
}

/**
 * The subject a request names where its route declares it; undefined when it is not a string there
 * (a missing or mistyped body field is then the validation pipe's 400, which runs after the guard).
 */
export function subjectNamed(request: FastifyRequest, declared: SubjectDeclaration): string | undefined {
  const source: unknown = declared.in === 'path' ? request.params : request.body;
  if (typeof source !== 'object' || source === null || !Object.hasOwn(source, declared.field))
    return undefined;
  const value: unknown = (source as Record<string, unknown>)[declared.field];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The binding rule, in one place (the access guard calls it for every route that declares a subject): a
 * subject outside the safe set (common/subject.ts) is 400 VALIDATION_FAILED naming the field, whatever the key
 * (path parameters have no DTO, and a binding must never be matched against `alice/../bob`); a bound key
 * naming a subject outside its binding is 403 SUBJECT_NOT_ALLOWED naming the field, never echoing the subject.
 */
export function assertSubjectAllowed(
  binding: SubjectBinding | null,
  declared: SubjectDeclaration,
  request: FastifyRequest,
): void {
  const subject = subjectNamed(request, declared);
  if (subject !== undefined && !isSafeSubject(subject))
    throw validationFailed([{ field: declared.field, problems: [subjectMessage(declared.field)] }]);
  if (binding === null) return;
  if (subject === undefined || bindingAllows(binding, declared.wallet, subject)) return;
  throw new AppError(
    'SUBJECT_NOT_ALLOWED',
    `This API key is not bound to the ${declared.wallet} subject named in ${declared.field}`,
    { field: declared.field },
  );
}

const patternList = (patterns: string[]): string => (patterns.length > 0 ? patterns.join(', ') : '(none)');

/** One line for the CLI's table: `users: a-*, b; integrators: c`, or `any subject` when unbound. */
export function describeBinding(binding: SubjectBinding | null): string {
  if (binding === null) return 'any subject';
  return `users: ${patternList(binding.userSubjects)}; integrators: ${patternList(binding.integratorSubjects)}`;
}
