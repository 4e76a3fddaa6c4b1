import { describe, expect, test } from 'vitest';
import { type Catalogue, catalogueFor } from '../../../packages/site-forms/src/lib/i18n/catalogues.ts';
import { defineSite } from '../../../packages/site-forms/src/lib/site/define-site.ts';

/** What the texts that hold values are given here: a label or name, a number, two links; the methods of a 405. */
const SAMPLES = ['Phone', 10];
const OWN_SAMPLES: Record<string, unknown[]> = {
  'refusals.methodNotAllowed': [['GET', 'POST']],
  'mail.confirmation.lines': ['Atelier Nord', 'https://example.org/confirm', 'https://example.org/stop'],
};

/** Every text of a catalogue by its dotted key; a function's text is what it says of sample values. */
function entries(catalogue: unknown, path = ''): [key: string, text: unknown][] {
  if (typeof catalogue === 'function') {
    return [[`${path}(${catalogue.length})`, catalogue(...(OWN_SAMPLES[path] ?? SAMPLES.slice(0, catalogue.length)))]];
  }
  if (typeof catalogue === 'string') return [[path, catalogue]];
  return Object.entries(catalogue as Record<string, unknown>).flatMap(([key, value]) => entries(value, path ? `${path}.${key}` : key));
}

const keys = (catalogue: Catalogue) => entries(catalogue).map(([key]) => key);

describe('the catalogues', () => {
  test('German has every text English has, and no other, each taking the same values', () => {
    expect(keys(catalogueFor('de'))).toEqual(keys(catalogueFor('en')));
    expect(keys(catalogueFor('en')).length).toBeGreaterThan(100);
  });

  test.each(['en', 'de'] as const)('%s: no text is empty', (language) => {
    for (const [key, text] of entries(catalogueFor(language))) {
      const lines = Array.isArray(text) ? text.filter((line) => line !== '') : [text];
      expect(lines.length, key).toBeGreaterThan(0);
      for (const line of lines) expect(typeof line === 'string' && line.trim() !== '', key).toBe(true);
    }
  });

  test('the two differ in every sentence a visitor reads (a forgotten translation is a copy of the English)', () => {
    const english = new Map(entries(catalogueFor('en')));
    // The same in both languages: a word German borrows.
    const same = new Set(['contact.nameLabel', 'exports.columns.status']);
    const copies = entries(catalogueFor('de')).filter(([key, text]) => !same.has(key) && JSON.stringify(text) === JSON.stringify(english.get(key)));
    expect(copies.map(([key]) => key)).toEqual([]);
  });
});

describe('the English catalogue holds the spec’s texts byte for byte', () => {
  const en = catalogueFor('en');
  test.each([
    ['the invalid email', en.validation.invalidEmail, 'Please enter a valid email address'],
    ['a short message', en.validation.messageTooShort(10), 'Message must be at least 10 characters'],
    ['the server failure', en.refusals.internalError, 'Internal server error'],
    ['the newsletter button', en.newsletter.submit, 'Subscribe'],
    ['the newsletter button while sending', en.newsletter.busy, 'Subscribing...'],
    ['the newsletter thanks', en.newsletter.thanks, 'Thanks for subscribing!'],
    ['a failed request', en.client.failed, 'Something went wrong. Please try again.'],
    ['one minute to wait', en.refusals.tooManyAttempts(1), 'Too many attempts. Please try again in 1 minute.'],
    ['minutes to wait', en.refusals.tooManyAttempts(10), 'Too many attempts. Please try again in 10 minutes.'],
  ])('%s', (_, text, expected) => {
    expect(text).toBe(expected);
  });
});

describe('the German catalogue', () => {
  const de = catalogueFor('de');
  test.each([
    ['the invalid email', de.validation.invalidEmail, 'Bitte geben Sie eine gültige E-Mail-Adresse ein'],
    ['a short message', de.validation.messageTooShort(10), 'Die Nachricht muss mindestens 10 Zeichen lang sein'],
    ['the server failure', de.refusals.internalError, 'Interner Serverfehler'],
    ['the newsletter button while sending', de.newsletter.busy, 'Wird abonniert …'],
    ['one minute to wait', de.refusals.tooManyAttempts(1), 'Zu viele Versuche. Bitte versuchen Sie es in 1 Minute noch einmal.'],
    ['minutes to wait', de.refusals.tooManyAttempts(3), 'Zu viele Versuche. Bitte versuchen Sie es in 3 Minuten noch einmal.'],
    ['an owner’s field left empty', de.validation.required('Telefon'), 'Bitte füllen Sie „Telefon“ aus'],
  ])('%s', (_, text, expected) => {
    expect(text).toBe(expected);
  });
});

describe('the site setting', () => {
  test('German settings get German defaults for what a visitor reads', () => {
    const site = defineSite({ name: 'Werkstatt Süd', language: 'de' });
    expect(site.language).toBe('de');
    expect(site.description).toBe('Werkstatt Süd: Neuigkeiten und ein Weg, uns zu erreichen.');
    expect(site.newsletterConsent).toBe('Ich möchte den Newsletter per E-Mail erhalten. Ich kann ihn jederzeit abbestellen.');
  });

  test('English is the default', () => {
    const site = defineSite({ name: 'Atelier Nord' });
    expect(site.language).toBe('en');
    expect(site.newsletterConsent).toBe('I would like to receive the newsletter by email. I can unsubscribe at any time.');
  });

  test('a language without a catalogue stops the build naming the setting', () => {
    // @ts-expect-error: French is not a language of the site.
    expect(() => defineSite({ name: 'Atelier', language: 'fr' })).toThrow('site.config.ts: language must be one of: en, de');
  });
});

describe('the site’s own texts', () => {
  test('the suite’s site settings (tests/fixtures/test.site.config.ts) speak English, the spec’s language', async () => {
    const { texts } = await import('../../../packages/site-forms/src/lib/i18n/texts.ts');
    expect(texts).toBe(catalogueFor('en'));
    expect(texts.validation.invalidEmail).toBe('Please enter a valid email address');
  });
});
