import { describe, expect, test } from 'vitest';
import { composeDigest, digestDue, nextDigestAt, type HeldDigest, type HeldMessage } from '../../../packages/site-forms/src/lib/spam/digest.ts';

const SMTP = { url: 'smtp://127.0.0.1:2525', to: 'owner@example.com', from: 'site@forms.example.com' };
const SITE = { name: 'Atelier Nord', senderName: 'Atelier Nord forms', adminOrigin: undefined };
const NOW = new Date('2026-11-22T23:00:00.000Z');

const held = (id: number, overrides: Partial<HeldMessage> = {}): HeldMessage => ({
  id,
  createdAt: '2026-11-22T21:05:09.123Z',
  name: 'Spammy McSpamface',
  message: 'Buy cheap pills at https://a.test\nand more https://b.test https://c.test',
  reasons: ['proof-missing', 'too-many-links'],
  ...overrides,
});

/** What the store hands the digest: the count, and the newest messages first. */
const digestOf = (...newest: HeldMessage[]): HeldDigest => ({ count: newest.length, newest });

describe('when the digest goes out', () => {
  test.each([
    ['never sent', undefined, true],
    ['sent a day ago to the millisecond', '2026-11-21T23:00:00.000Z', true],
    ['sent a day ago less a millisecond', '2026-11-21T23:00:00.001Z', false],
    ['sent an hour ago', '2026-11-22T22:00:00.000Z', false],
  ])('%s: due %s', (_, last, due) => {
    expect(digestDue(last, NOW)).toBe(due);
  });

  test.each([
    ['never sent, before the time', undefined, '2026-11-22T07:29:59.999Z', false],
    ['never sent, at the time', undefined, '2026-11-22T07:30:00.000Z', true],
    ['sent yesterday at the time, today before it', '2026-11-21T07:30:00.000Z', '2026-11-22T07:00:00.000Z', false],
    ['sent yesterday at the time, today at it', '2026-11-21T07:30:00.000Z', '2026-11-22T07:30:00.000Z', true],
    ['sent on demand an hour ago, after the time', '2026-11-22T08:00:00.000Z', '2026-11-22T09:00:00.000Z', false],
    ['sent on demand just before the time', '2026-11-22T07:29:00.000Z', '2026-11-22T07:31:00.000Z', true],
  ])('with DIGEST_TIME=07:30, %s: due %s', (_, last, now, due) => {
    expect(digestDue(last, new Date(now), { hour: 7, minute: 30 })).toBe(due);
  });

  test('the next digest at the owner’s time of day is today’s when it has not come, else tomorrow’s', () => {
    expect(nextDigestAt(new Date('2026-11-22T07:00:00.000Z'), { hour: 7, minute: 30 })).toEqual(new Date('2026-11-22T07:30:00.000Z'));
    expect(nextDigestAt(new Date('2026-11-22T07:30:00.000Z'), { hour: 7, minute: 30 })).toEqual(new Date('2026-11-23T07:30:00.000Z'));
    expect(nextDigestAt(new Date('2026-11-22T23:59:00.000Z'), { hour: 0, minute: 0 })).toEqual(new Date('2026-11-23T00:00:00.000Z'));
  });
});

describe('the digest email', () => {
  test('lists the count, each name and first line with its reasons, and how to review', () => {
    const email = composeDigest(digestOf(held(9, { name: 'Bot', message: 'Hello', reasons: ['too-fast'] }), held(7)), SMTP, SITE, {
      now: NOW,
      retentionDays: 30,
    });
    expect(email).toEqual({
      from: { name: 'Atelier Nord forms', address: 'site@forms.example.com' },
      to: 'owner@example.com',
      subject: '[Atelier Nord] Held as spam: 2 messages',
      messageId: '<spam-digest.1795388400000@forms.example.com>',
      date: NOW,
      envelope: { from: 'site@forms.example.com', to: ['owner@example.com'] },
      text: [
        '2 messages were held as spam since the last digest. None of them was emailed to you.',
        '',
        '#9  22 November 2026 at 21:05 UTC  Bot',
        '    Hello',
        '    held because: sent less than 3 seconds after the form was opened',
        '#7  22 November 2026 at 21:05 UTC  Spammy McSpamface',
        '    Buy cheap pills at https://a.test',
        "    held because: no proof that the page's script ran (JavaScript off, or a program posting directly); more links in the message than SPAM_MAX_LINKS allows",
        '',
        'To see them all:      npm run inbox -- list --status spam',
        'To read one:          npm run inbox -- show <id>',
        'If one is not spam:   npm run inbox -- release <id>   (it is then delivered like any other message)',
        'Held messages are deleted 30 days after they arrived (SPAM_RETENTION_DAYS).',
        '',
      ].join('\n'),
    });
  });

  test('one message is counted in the singular', () => {
    const email = composeDigest(digestOf(held(1)), SMTP, SITE, { now: NOW, retentionDays: 7 });
    expect(email.subject).toBe('[Atelier Nord] Held as spam: 1 message');
    expect(email.text.split('\n')[0]).toBe('1 message was held as spam since the last digest. None of them was emailed to you.');
    expect(email.text).toContain('deleted 7 days after');
  });

  test('a long name and a long first line are cut, control characters become spaces', () => {
    const email = composeDigest(digestOf(held(1, { name: `${'N'.repeat(70)}`, message: `\n  ${'x'.repeat(120)}\u0007y\nsecond line` })), SMTP, SITE, {
      now: NOW,
      retentionDays: 30,
    });
    const lines = email.text.split('\n');
    expect(lines[2]).toBe(`#1  22 November 2026 at 21:05 UTC  ${'N'.repeat(59)}…`);
    expect(lines[3]).toBe(`    ${'x'.repeat(99)}…`);
    expect(composeDigest(digestOf(held(1, { message: 'a\u0007b' })), SMTP, SITE, { now: NOW, retentionDays: 30 }).text.split('\n')[3]).toBe('    a b');
  });

  test('a reason the code no longer knows is shown as stored', () => {
    const email = composeDigest(digestOf(held(1, { reasons: ['old-rule'] })), SMTP, SITE, { now: NOW, retentionDays: 30 });
    expect(email.text.split('\n')[4]).toBe('    held because: old-rule');
  });

  test('it lists the newest 50, and the older ones are counted', () => {
    // One more than it lists: the 51st newest is counted, not listed.
    const newest = Array.from({ length: 51 }, (_, i) => held(120_000 - i));
    const text = composeDigest({ count: 120_000, newest }, SMTP, SITE, { now: NOW, retentionDays: 30 }).text;
    expect(text.split('\n')[0]).toBe('120000 messages were held as spam since the last digest. None of them was emailed to you.');
    expect(text).toContain('#120000  ');
    expect(text).toContain('#119951  ');
    expect(text).not.toContain('#119950  ');
    expect(text).toContain('…and 119950 older ones.');
  });

  test('writes each time in the site’s time zone, with its name', () => {
    const text = composeDigest(digestOf(held(9, { name: 'Bot' })), SMTP, { ...SITE, timeZone: 'Europe/Vienna' }, { now: NOW, retentionDays: 30 }).text;
    expect(text.split('\n')[2]).toBe('#9  22 November 2026 at 22:05 CET  Bot');
  });

  test.each([
    [
      'the starter’s checkout (npm-run)',
      'npm-run',
      [
        'To see them all:      npm run inbox -- list --status spam',
        'To read one:          npm run inbox -- show <id>',
        'If one is not spam:   npm run inbox -- release <id>   (it is then delivered like any other message)',
      ],
    ],
    [
      'an owner’s site with the package installed (npx)',
      'npx',
      [
        'To see them all:      npx site-forms inbox list --status spam',
        'To read one:          npx site-forms inbox show <id>',
        'If one is not spam:   npx site-forms inbox release <id>   (it is then delivered like any other message)',
      ],
    ],
  ] as const)('without the admin, names the commands that work in %s', (_, commandStyle, lines) => {
    const text = composeDigest(digestOf(held(1)), SMTP, SITE, { now: NOW, retentionDays: 30, commandStyle }).text;
    expect(text).toContain(`\n\n${lines.join('\n')}\n`);
  });

  test('points at the admin when it is on', () => {
    const text = composeDigest(digestOf(held(1)), SMTP, { ...SITE, adminOrigin: 'https://www.example.com' }, { now: NOW, retentionDays: 30 }).text;
    expect(text).toContain('Review them in your inbox: https://www.example.com/admin/messages?status=spam\n');
    expect(text).not.toContain('npm run inbox');
  });
});
