import { describe, expect, test } from 'vitest';
import { autoReply } from '../../../packages/site-forms/src/lib/config/auto-reply.ts';

describe('the configuration of the automatic reply', () => {
  test('off by default', () => {
    expect(autoReply.read({})).toEqual({ config: { autoReply: undefined }, problems: [] });
    expect(autoReply.describe(autoReply.read({}).config)).toEqual({ autoReply: 'off' });
  });

  test('on, with the default words, or the owner’s (\\n for a new line)', () => {
    const smtp = { SMTP_URL: 'smtp://127.0.0.1:2525' };
    // The default words as the sender reads them: tests/lib/contact/auto-reply.test.ts, over SMTP.
    expect(autoReply.read({ ...smtp, AUTO_REPLY: 'true' }).config.autoReply).toMatchObject({ includeMessage: false, maxPerHour: 10 });
    expect(
      autoReply.read({ ...smtp, AUTO_REPLY: 'TRUE', AUTO_REPLY_SUBJECT: 'Got it', AUTO_REPLY_TEXT: 'Hi {name},\\nthanks.', AUTO_REPLY_INCLUDE_MESSAGE: 'true' })
        .config.autoReply,
    ).toEqual({ subject: 'Got it', text: 'Hi {name},\nthanks.', includeMessage: true, maxPerHour: 10 });
    expect(autoReply.read({ ...smtp, AUTO_REPLY: 'true', AUTO_REPLY_MAX_PER_HOUR: '250' }).config.autoReply?.maxPerHour).toBe(250);
  });

  test.each([
    [{ AUTO_REPLY: 'true' }, 'AUTO_REPLY needs a mail server: set SMTP_URL, CONTACT_TO and CONTACT_FROM'],
    [{ AUTO_REPLY: 'yes' }, 'AUTO_REPLY must be true or false'],
    [{ AUTO_REPLY_INCLUDE_MESSAGE: '1' }, 'AUTO_REPLY_INCLUDE_MESSAGE must be true or false'],
    [{ AUTO_REPLY_MAX_PER_HOUR: '0' }, 'AUTO_REPLY_MAX_PER_HOUR must be at least 1'],
    [{ AUTO_REPLY_MAX_PER_HOUR: 'lots' }, 'AUTO_REPLY_MAX_PER_HOUR must be a whole number'],
    // The reply goes only to a sender whose browser solved the page's proof: without the filter, nobody is asked for one.
    [
      { AUTO_REPLY: 'true', SMTP_URL: 'smtp://127.0.0.1:2525', SPAM_FILTER: 'off' },
      'AUTO_REPLY needs SPAM_FILTER=on: only a sender whose browser solved the page’s proof of work (or passed Turnstile) is answered',
    ],
  ])('%j is refused: %s', (env, problem) => {
    expect(autoReply.read(env).problems).toEqual([problem]);
  });
});
