import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { STATUS_JS } from './status.assets';

/** Lets the script's promise callbacks (fetch → then) run: one turn of the event loop, no timer. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The page's script run on the login form in a bare context (a fake document and fetch), the form submitted with
 * `answer` as the response to its POST /status/login: the message it shows.
 */
async function loginMessage(answer: number | 'no answer'): Promise<{ text: string; hidden: boolean }> {
  let submit: ((event: { preventDefault(): void }) => void) | undefined;
  const elements: Record<string, object> = {
    login: {
      addEventListener: (type: string, listener: typeof submit) => {
        if (type === 'submit') submit = listener;
      },
    },
    key: { value: ' trk_live_key ' },
    'login-error': { textContent: '', hidden: true },
  };
  runInNewContext(STATUS_JS, {
    document: { getElementById: (id: string) => elements[id] ?? null },
    window: { location: { replace: () => undefined } },
    fetch: () =>
      answer === 'no answer'
        ? Promise.reject(new Error('offline'))
        : Promise.resolve({ ok: answer < 300, status: answer }),
    setTimeout: () => undefined,
  });
  if (!submit) throw new Error('the script did not listen to the form');
  submit({ preventDefault: () => undefined });
  await settle();
  const error = elements['login-error'] as { textContent: string; hidden: boolean };
  expect((elements.key as { value: string }).value).toBe('');
  return { text: error.textContent, hidden: error.hidden };
}

describe('status page script (login form)', () => {
  it.each([
    [401, 'Wrong or revoked key.'],
    [403, 'This key is not an admin key.'],
    [429, 'Too many attempts; wait a minute and try again.'],
    [503, 'The service could not log you in (HTTP 503); try again in a moment.'],
    [500, 'The service could not log you in (HTTP 500); try again in a moment.'],
    ['no answer', 'The service did not answer.'],
  ] as const)('says why a login failed: %s → %s', async (answer, text) => {
    expect(await loginMessage(answer)).toEqual({ text, hidden: false });
  });
});
