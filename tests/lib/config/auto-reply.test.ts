import { describe, expect, test } from 'vitest';
import { AUTO_REPLY_DEFAULTS, autoReply } from '../../../src/lib/config/auto-reply.ts';

describe('the configuration of the automatic reply', () => {
  test('off by default', () => {
    expect(autoReply.read({})).toEqual({ config: { autoReply: undefined }, problems: [] });
    expect(autoReply.describe(autoReply.read({}).config)).toEqual({ autoReply: 'off' });
  });

  test('on, with the default words, or the owner’s (\\n for a new line)', () => {
    const smtp = { SMTP_URL: 'smtp://127.0.0.1:2525' };
    expect(autoReply.read({ ...smtp, AUTO_REPLY: 'true' }).config.autoReply).toEqual({ ...AUTO_REPLY_DEFAULTS, includeMessage: false });
    expect(
      autoReply.read({ ...smtp, AUTO_REPLY: 'TRUE', AUTO_REPLY_SUBJECT: 'Got it', AUTO_REPLY_TEXT: 'Hi {name},\\nthanks.', AUTO_REPLY_INCLUDE_MESSAGE: 'true' })
        .config.autoReply,
    ).toEqual({ subject: 'Got it', text: 'Hi {name},\nthanks.', includeMessage: true });
    expect(AUTO_REPLY_DEFAULTS.subject).toBe('We received your message');
  });

  test.each([
    [{ AUTO_REPLY: 'true' }, 'AUTO_REPLY needs a mail server: set SMTP_URL, CONTACT_TO and CONTACT_FROM'],
    [{ AUTO_REPLY: 'yes' }, 'AUTO_REPLY must be true or false'],
    [{ AUTO_REPLY_INCLUDE_MESSAGE: '1' }, 'AUTO_REPLY_INCLUDE_MESSAGE must be true or false'],
  ])('%j is refused: %s', (env, problem) => {
    expect(autoReply.read(env).problems).toEqual([problem]);
  });
});
