import { describe, expect, test } from 'vitest';
import { composeConfirmation } from '../../../packages/site-forms/src/lib/newsletter/opt-in.ts';

// The confirmation email as a whole, composed inside each test (so that a mutation run counts the
// test as covering it): every field, written out.
const T0 = new Date('2026-11-25T12:00:00.000Z');
const TOKENS = { confirm: 'confirm-token-0123456789abcdefghij', unsubscribe: 'UNSUB678-rest-of-the-unsubscribe-token' };
const compose = (from: string) =>
  composeConfirmation('reader@example.org', TOKENS, {
    smtp: { url: 'smtp://127.0.0.1:25', to: 'owner@example.com', from },
    site: { name: 'Atelier Nord', senderName: 'Atelier Nord website' },
    publicUrl: 'https://www.example.com',
    now: T0,
  });

describe('the confirmation email, whole', () => {
  test('every field, for a sender whose address has capitals', () => {
    expect(compose('News@Mail.Example.COM')).toEqual({
      from: { name: 'Atelier Nord website', address: 'News@Mail.Example.COM' },
      to: 'reader@example.org',
      subject: 'Confirm your subscription to Atelier Nord',
      text: [
        'Someone, probably you, asked to receive the newsletter of Atelier Nord at this address.',
        '',
        'To confirm, open this link within 48 hours and press the button:',
        'https://www.example.com/newsletter/confirm/?token=confirm-token-0123456789abcdefghij',
        '',
        'If it was not you, ignore this email: nothing happens without the confirmation.',
        '',
        'To stop at any time: https://www.example.com/newsletter/unsubscribe/?token=UNSUB678-rest-of-the-unsubscribe-token',
        '',
      ].join('\n'),
      messageId: `<newsletter-confirm.${T0.getTime()}.UNSUB678@mail.example.com>`,
      date: T0,
      envelope: { from: 'News@Mail.Example.COM', to: ['reader@example.org'] },
      headers: {
        'List-Unsubscribe': '<https://www.example.com/api/newsletter/unsubscribe?token=UNSUB678-rest-of-the-unsubscribe-token>',
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        'Auto-Submitted': 'auto-generated',
      },
    });
  });

  test('the Message-ID takes the domain after the last @ of the sender', () => {
    expect(compose('"a@b"@Example.org').messageId).toBe(`<newsletter-confirm.${T0.getTime()}.UNSUB678@example.org>`);
  });
});
