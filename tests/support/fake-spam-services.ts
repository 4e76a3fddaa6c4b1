import type { SpamConfig } from '../../packages/site-forms/src/lib/config/config.ts';
import { DEFAULT_WEIGHING } from '../../packages/site-forms/src/lib/spam/weights.ts';
import type { FakeReply } from './fake-http.ts';

/** Cloudflare's documented test secret keys (developers.cloudflare.com/turnstile/troubleshooting/testing). */
export const TURNSTILE_TEST_SECRETS = {
  passes: '1x0000000000000000000000000000000AA',
  fails: '2x0000000000000000000000000000000AA',
  spent: '3x0000000000000000000000000000000AA',
} as const;

/** The token the documented test site keys make the widget produce. */
export const TURNSTILE_DUMMY_TOKEN = 'XXXX.DUMMY.TOKEN.XXXX';

/**
 * siteverify as Cloudflare answers it for its test secret keys: the first accepts any
 * token, the second refuses every one, the third says the token was already spent; any
 * other secret is an invalid key. Reads the form-encoded body like the real endpoint.
 */
export function replyTurnstile(): FakeReply {
  return ({ body }, res) => {
    const form = new URLSearchParams(body);
    const secret = form.get('secret') ?? '';
    const response = form.get('response') ?? '';
    const answer = !secret
      ? { success: false, 'error-codes': ['missing-input-secret'] }
      : !response
        ? { success: false, 'error-codes': ['missing-input-response'] }
        : secret === TURNSTILE_TEST_SECRETS.passes
          ? {
              success: true,
              challenge_ts: '2026-11-22T22:00:00.000Z',
              hostname: 'example.com',
              'error-codes': [],
              action: '',
              cdata: '',
              metadata: { interactive: false },
            }
          : secret === TURNSTILE_TEST_SECRETS.fails
            ? { success: false, 'error-codes': ['invalid-input-response'] }
            : secret === TURNSTILE_TEST_SECRETS.spent
              ? { success: false, 'error-codes': ['timeout-or-duplicate'] }
              : { success: false, 'error-codes': ['invalid-input-secret'] };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer));
  };
}

/** The key the fake Akismet accepts; any other is answered `invalid`, as Akismet does. */
export const AKISMET_TEST_KEY = 'akismet-test-key';

/**
 * Akismet's REST API as documented: `comment-check` answers `true` for the author name
 * `akismet-guaranteed-spam` (Akismet's own test value) and `false` otherwise; the
 * corrections answer with Akismet's thanks; a wrong key gets `invalid` and a debug header.
 */
export function replyAkismet(): FakeReply {
  return ({ url, body }, res) => {
    const form = new URLSearchParams(body);
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    if (form.get('api_key') !== AKISMET_TEST_KEY) {
      res.setHeader('x-akismet-debug-help', 'We were unable to parse your blog URI');
      res.end('invalid');
      return;
    }
    if (url === '/1.1/comment-check') res.end(form.get('comment_author') === 'akismet-guaranteed-spam' ? 'true' : 'false');
    else if (url === '/1.1/submit-spam' || url === '/1.1/submit-ham') res.end('Thanks for making the web a better place.');
    else {
      res.statusCode = 404;
      res.end('Not found');
    }
  };
}

/** The spam filter on as the shipped defaults set it, with neither Turnstile nor Akismet. */
export const SPAM_ON: SpamConfig['spam'] = {
  enabled: true,
  maxLinks: 2,
  retentionDays: 30,
  turnstile: undefined,
  akismet: undefined,
  newsletterRequiresProof: false,
  weighing: DEFAULT_WEIGHING,
  digestTime: undefined,
};
