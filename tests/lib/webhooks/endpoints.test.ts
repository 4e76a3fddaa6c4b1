import { describe, expect, test } from 'vitest';
import { alertText, type Endpoint, formatFor } from '../../../packages/site-forms/src/lib/webhooks/endpoints.ts';
import type { SiteEvent } from '../../../packages/site-forms/src/lib/webhooks/events.ts';

const EVENT: SiteEvent = {
  id: 'msg_1',
  type: 'contact.received',
  createdAt: '2026-11-24T12:00:00.000Z',
  data: { id: 7, name: 'Zoë <@everyone>', email: 'zoe@example.org', message: 'First line & more\nSecond line' },
};
const endpoint = (kind: Endpoint['kind'], more: Partial<Endpoint> = {}): Endpoint => ({
  name: kind,
  kind,
  url: 'https://hooks.example',
  events: ['contact.received'],
  ...more,
});

describe('what each endpoint receives', () => {
  test('a standard webhook: the event as Standard Webhooks says', () => {
    expect(formatFor(endpoint('standard'), EVENT, 'Atelier Nord')).toEqual({
      body: JSON.stringify({ type: 'contact.received', timestamp: '2026-11-24T12:00:00.000Z', data: EVENT.data }),
      headers: { 'content-type': 'application/json' },
    });
  });

  test('Slack: text with its markup characters escaped, and no formatting', () => {
    expect(JSON.parse(formatFor(endpoint('slack'), EVENT, 'Atelier Nord').body)).toEqual({
      text: 'Atelier Nord: new message from Zoë &lt;@everyone&gt; &lt;zoe@example.org&gt;\nFirst line &amp; more',
      mrkdwn: false,
    });
  });

  test('Discord: content, and nobody mentioned whatever the visitor typed', () => {
    expect(JSON.parse(formatFor(endpoint('discord'), EVENT, 'Atelier Nord').body)).toEqual({
      content: 'Atelier Nord: new message from Zoë \\<@everyone> \\<zoe@example.org>\nFirst line & more',
      allowed_mentions: { parse: [] },
    });
  });

  test('Telegram: plain text to the chat, without link previews', () => {
    expect(JSON.parse(formatFor(endpoint('telegram', { chatId: '-100123' }), EVENT, 'Atelier Nord').body)).toEqual({
      chat_id: '-100123',
      text: 'Atelier Nord: new message from Zoë <@everyone> <zoe@example.org>\nFirst line & more',
      disable_web_page_preview: true,
    });
  });

  test('ntfy: the text as the body, a title in ASCII', () => {
    expect(formatFor(endpoint('ntfy'), EVENT, 'Café Nord')).toEqual({
      body: 'Café Nord: new message from Zoë <@everyone> <zoe@example.org>\nFirst line & more',
      headers: { 'content-type': 'text/plain; charset=utf-8', title: 'Caf? Nord: new message', tags: 'envelope' },
    });
  });

  test.each([
    ['none', 'Atelier Nord: new message (#7)'],
    ['full', 'Atelier Nord: new message from Zoë <@everyone> <zoe@example.org>\n\nFirst line & more\nSecond line'],
  ] as const)('how much of the message an alert shows: %s', (detail, text) => {
    expect(alertText(EVENT, 'Atelier Nord', detail)).toBe(text);
  });

  test.each([
    ['name-and-first-line', 'Atelier Nord: new message (quote) from Ada <ada@example.org>\ntopic: table'],
    ['full', 'Atelier Nord: new message (quote) from Ada <ada@example.org>\n\ntopic: table\nbudget: 1200\nconsent: true'],
  ] as const)("an owner's form is named, and its fields are its text: %s", (detail, text) => {
    const event: SiteEvent = {
      ...EVENT,
      data: { id: 8, name: 'Ada', email: 'ada@example.org', message: '', form: 'quote', fields: { topic: 'table', budget: 1200, consent: true } },
    };
    expect(alertText(event, 'Atelier Nord', detail)).toBe(text);
  });

  test('a subscription names the address', () => {
    const event: SiteEvent = { ...EVENT, type: 'newsletter.subscribed', data: { email: 'reader@example.org', provider: 'local' } };
    expect(alertText(event, 'Atelier Nord', 'name-and-first-line')).toBe('Atelier Nord: new subscriber: reader@example.org');
  });
});

describe("a visitor's markup reaches a chat as the characters typed", () => {
  const MARKUP: SiteEvent = {
    ...EVENT,
    data: {
      id: 11,
      name: '**Ada** _the_ ~~admin~~',
      email: 'ada@example.org',
      message: '[Reset your password](https://evil.example/login) and *urgent* `code`\n# Call now\n> quoted\n- one\n1. two\n||spoiler|| <t:0:R> \\[x]',
    },
  };

  test('Discord: every markup character escaped, so a masked link shows its address and nothing is bold, a heading or a quote', () => {
    expect(JSON.parse(formatFor(endpoint('discord', { detail: 'full' }), MARKUP, 'Atelier Nord').body).content).toBe(
      [
        'Atelier Nord: new message from \\*\\*Ada\\*\\* \\_the\\_ \\~\\~admin\\~\\~ \\<ada@example.org>',
        '',
        '\\[Reset your password\\](https://evil.example/login) and \\*urgent\\* \\`code\\`',
        '\\# Call now',
        '\\> quoted',
        '\\- one',
        '1\\. two',
        '\\|\\|spoiler\\|\\| \\<t:0:R> \\\\\\[x\\]',
      ].join('\n'),
    );
  });

  test('Slack: the text is not read as mrkdwn, so *bold* and _italic_ stay as typed', () => {
    expect(JSON.parse(formatFor(endpoint('slack'), MARKUP, 'Atelier Nord').body)).toEqual({
      text: 'Atelier Nord: new message from **Ada** _the_ ~~admin~~ &lt;ada@example.org&gt;\n[Reset your password](https://evil.example/login) and *urgent* `code`',
      mrkdwn: false,
    });
  });
});

describe('what an alert makes of missing or long parts', () => {
  test('the automatic reply is never posted: nothing to send', () => {
    expect(formatFor(endpoint('auto-reply', { url: '' }), EVENT, 'Atelier Nord')).toEqual({ body: '', headers: {} });
  });

  test('a message without a name, an address or a text, and a field without a value: empty places, no "undefined"', () => {
    const event: SiteEvent = { ...EVENT, data: { id: 9, fields: { note: null, size: 'L' } } };
    expect(alertText(event, 'Atelier Nord', 'full')).toBe('Atelier Nord: new message from  <>\n\nnote: \nsize: L');
    expect(alertText({ ...EVENT, data: { id: 9 } }, 'Atelier Nord', 'name-and-first-line')).toBe('Atelier Nord: new message from  <>\n');
  });

  test('a subscription without an address', () => {
    expect(alertText({ ...EVENT, type: 'newsletter.confirmed', data: {} }, 'Atelier Nord', 'full')).toBe('Atelier Nord: subscriber confirmed: ');
  });

  test('a text longer than the service takes is cut to its limit, in characters, the last one an ellipsis', () => {
    const event: SiteEvent = { ...EVENT, data: { id: 10, name: 'Ada', email: 'ada@example.org', message: '😀'.repeat(2500) } };
    // The head is 53 characters (its `<` escaped) and a blank line 2: 1,944 emoji and the ellipsis make 2,000.
    const content = `Atelier Nord: new message from Ada \\<ada@example.org>\n\n${'😀'.repeat(1944)}…`;
    expect(JSON.parse(formatFor(endpoint('discord', { detail: 'full' }), event, 'Atelier Nord').body)).toEqual({ content, allowed_mentions: { parse: [] } });
    const exactly = { ...event, data: { ...event.data, message: '😀'.repeat(1945) } };
    expect(JSON.parse(formatFor(endpoint('discord', { detail: 'full' }), exactly, 'Atelier Nord').body).content).toBe(
      `Atelier Nord: new message from Ada \\<ada@example.org>\n\n${'😀'.repeat(1945)}`,
    );
  });
});

describe('the parts of an alert, exactly', () => {
  const FILES = [
    { name: 'front view.png', size: 48_213, url: 'https://werkbank.example/api/files/a' },
    { name: 'plan.pdf', size: 1_200_000, url: 'https://werkbank.example/api/files/b' },
  ];

  test.each([
    [
      'an event without an id and no detail: the head alone',
      { type: 'newsletter.subscribed', data: { email: 'reader@example.org' } },
      'none',
      'Atelier Nord: new subscriber',
    ],
    [
      'each file on a line of its own, nothing between them',
      { type: 'contact.received', data: { id: 12, name: 'Ada', email: 'ada@example.org', message: 'The drawings.', files: FILES } },
      'name-and-first-line',
      [
        'Atelier Nord: new message from Ada <ada@example.org>',
        'The drawings.',
        'front view.png (48.2 kB): https://werkbank.example/api/files/a',
        'plan.pdf (1.2 MB): https://werkbank.example/api/files/b',
      ].join('\n'),
    ],
    [
      'a message that starts with blank lines: its first line of text',
      { type: 'contact.received', data: { id: 13, name: 'Ada', email: 'ada@example.org', message: '\n\n  Hello there\nSecond line' } },
      'name-and-first-line',
      'Atelier Nord: new message from Ada <ada@example.org>\nHello there',
    ],
    [
      'a name and an address with line breaks and control characters: one space for each run, none at the ends',
      { type: 'contact.received', data: { id: 14, name: '  Ada\r\n\tLovelace\u2028 ', email: '\u0007ada@example.org\u0085', message: 'Hi' } },
      'name-and-first-line',
      'Atelier Nord: new message from Ada Lovelace <ada@example.org>\nHi',
    ],
  ] as const)('%s', (_, event, detail, text) => {
    expect(alertText({ ...EVENT, ...event } as SiteEvent, 'Atelier Nord', detail)).toBe(text);
  });

  test('Discord: a line start is escaped when it would be a heading, a list or a quote, even indented, and never mid-line', () => {
    const event: SiteEvent = {
      ...EVENT,
      data: { id: 15, name: 'Ada', email: 'ada@example.org', message: '  # indented\n\t> quoted\na-b and c+d\n12. twelve\n  3. indented\nversion 1.2\nv1.2' },
    };
    expect(JSON.parse(formatFor(endpoint('discord', { detail: 'full' }), event, 'Atelier Nord').body).content).toBe(
      [
        'Atelier Nord: new message from Ada \\<ada@example.org>',
        '',
        '  \\# indented',
        '\t\\> quoted',
        'a-b and c+d',
        '12\\. twelve',
        '  3\\. indented',
        'version 1.2',
        'v1.2',
      ].join('\n'),
    );
  });
});
