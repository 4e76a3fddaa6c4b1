import { type Challenge, solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Window } from 'happy-dom';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildOtherSite } from '../support/build-site.ts';
import { parseMail } from '../support/mime.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';

// A German owner who set only `name` and `language: 'de'` (tests/fixtures/german-default.*), and
// copied .env.example's automatic reply settings, turning it on: every text a visitor or the
// owner's mail reads is German unless the owner wrote it (issue 28, item 4; decision 0145).
let built: ReturnType<typeof buildOtherSite>;
let site: Site;
let smtp: FakeSmtpServer;

/** The automatic reply's lines of .env.example, as an owner who copies the file gets them. */
const EXAMPLE = Object.fromEntries(
  Object.entries(parseEnv(readFileSync(new URL('../../.env.example', import.meta.url), 'utf8'))).filter(([name]) => name.startsWith('AUTO_REPLY')),
);

beforeAll(async () => {
  // Each of the owner's forms has its page, as the build requires (issue 30, item 4).
  const page = (form: string, path: string) => `---\nimport { FormPage } from 'site-forms/pages';\n---\n\n<FormPage form="${form}" path="${path}" />\n`;
  built = buildOtherSite(
    `german-default-${process.pid}`,
    'tests/fixtures/german-default.site.config.ts',
    { FORMS_CONFIG: 'tests/fixtures/german-default.forms.config.ts' },
    {
      'src/pages/anfrage.astro': page('anfrage', '/anfrage'),
      'src/pages/termine.astro': page('termin', '/termine'),
      'src/pages/intern.astro': page('intern', '/intern'),
    },
  );
  smtp = await startSmtpServer();
  site = await startSite(
    // The spam filter on, and each post with the page's solved proof, as a browser's: the reply answers only such a sender (decision 0149).
    { ...EXAMPLE, SMTP_URL: smtp.url(), CONTACT_TO: 'owner@example.com', CONTACT_FROM: 'forms@example.com', AUTO_REPLY: 'true', SPAM_FILTER: 'on' },
    { start: built.start },
  );
}, 300_000);

afterAll(async () => {
  await site?.stop();
  await smtp?.close();
  built?.remove();
});

const SCRIPT = { accept: 'application/json', 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' };
/** The proof the page's script solves before it posts (`altcha`). */
async function proof(): Promise<string> {
  const { challenge } = (await (await fetch(`${site.url}/api/challenge`)).json()) as { challenge: Challenge };
  return Buffer.from(JSON.stringify({ challenge, solution: await solveChallenge({ challenge, deriveKey }) })).toString('base64');
}

const mailsTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address)).map((mail) => parseMail(mail.raw));

describe('a German site with the defaults', () => {
  test('the newsletter’s consent under the form is German', async () => {
    const html = await (await fetch(`${site.url}/`)).text();
    expect(html).toContain('Ich möchte den Newsletter per E-Mail erhalten. Ich kann ihn jederzeit abbestellen.');
  });

  test('the automatic reply, with .env.example’s settings, is German', async () => {
    const fields = {
      name: 'Ada Lovelace',
      email: 'ada@example.org',
      message: 'Ein Tisch aus Eiche, bitte.',
      callback: 'yes',
      honeypot: '',
      altcha: await proof(),
    };
    expect(await (await postForm(`${site.url}/api/contact`, fields, SCRIPT)).text()).toBe('{"success":true}');
    await eventually('the reply', () => mailsTo('ada@example.org').length === 1);
    const reply = mailsTo('ada@example.org')[0]!;
    expect(reply.header('subject')).toEqual(['Wir haben Ihre Nachricht erhalten']);
    expect(reply.text).toContain('Hallo Ada Lovelace,\n\nvielen Dank für Ihre Nachricht an Tischlerei Berger.');
  });

  test('the owner’s mail of a contact message is German, its ticked box “Ja”', async () => {
    await eventually('the owner’s mail', () => mailsTo('owner@example.com').some((mail) => mail.text.includes('Ein Tisch aus Eiche')));
    const mail = mailsTo('owner@example.com').find((m) => m.text.includes('Ein Tisch aus Eiche'))!;
    expect(mail.header('subject')).toEqual(['[Tischlerei Berger] Neue Nachricht von Ada Lovelace']);
    expect(mail.text).toMatch(
      /^Ein Tisch aus Eiche, bitte\.\n\nRückruf erwünscht: Ja\n\n-- \nVon: Ada Lovelace <ada@example\.org>\nGesendet: \d{1,2}\. \S+ \d{4} um \d\d:\d\d UTC \(Kontaktnachricht #\d+ auf Tischlerei Berger\)\n$/,
    );
  });

  test('the owner’s mail of their own form: their own German words, the boxes “Ja” and “Nein”', async () => {
    const fields = {
      name: 'Grace Hopper',
      email: 'grace@example.org',
      message: 'Ein Regal für die Küche.',
      express: 'yes',
      honeypot: '',
      altcha: await proof(),
    };
    expect(await (await postForm(`${site.url}/api/forms/anfrage`, fields, SCRIPT)).text()).toBe('{"success":true}');
    await eventually('the owner’s mail', () => mailsTo('owner@example.com').some((mail) => mail.text.includes('Ein Regal')));
    const mail = mailsTo('owner@example.com').find((m) => m.text.includes('Ein Regal'))!;
    expect(mail.header('subject')).toEqual(['[Tischlerei Berger] Neu: Angebot anfragen von Grace Hopper']);
    expect(mail.text).toMatch(
      /^Worum geht es\?: Ein Regal für die Küche\.\nEilig: Ja\nBesuch in der Werkstatt: Nein\n\n-- \nVon: Grace Hopper <grace@example\.org>\nGesendet: \d{1,2}\. \S+ \d{4} um \d\d:\d\d UTC \(Angebot anfragen #\d+ auf Tischlerei Berger\)\n$/,
    );
  });
});

describe('the site’s menu', () => {
  test('lists the owner’s forms at their pages: under the words the owner gave, else the title; one left out is not there', async () => {
    const window = new Window();
    window.document.write(await (await fetch(`${site.url}/contact/`)).text());
    const links = [...window.document.querySelectorAll('.site-nav a')].map((a) => [
      a.getAttribute('href'),
      a.textContent?.trim(),
      a.getAttribute('aria-current'),
    ]);
    expect(links).toEqual([
      ['/', 'Startseite', null],
      ['/contact', 'Kontakt', 'page'],
      ['/anfrage', 'Angebot', null],
      ['/termine', 'Termin vereinbaren', null],
    ]);
  });
});

describe('the spam digest of a German site', () => {
  test('is German, the reasons for holding each message too', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'german-digest-'));
    const mail = { SMTP_URL: smtp.url(), CONTACT_TO: 'digest@example.com', CONTACT_FROM: 'forms@example.com' };
    try {
      // A program's post, without the page's proof or a browser's headers: held as spam.
      const first = await startSite({ SPAM_FILTER: 'on', ...mail }, { start: built.start, dataDir });
      const fields = { name: 'Bot', email: 'bot@example.org', message: 'Billige Uhren, jetzt kaufen.', honeypot: '' };
      expect(await (await postForm(`${first.url}/api/contact`, fields, { accept: 'application/json' })).text()).toBe('{"success":true}');
      await first.stop();
      // The digest goes at the start of the next process, the first one due.
      const second = await startSite({ SPAM_FILTER: 'on', ...mail }, { start: built.start, dataDir });
      try {
        await eventually('the digest', () => mailsTo('digest@example.com').length === 1);
      } finally {
        await second.stop();
      }
      const digest = mailsTo('digest@example.com')[0]!;
      expect(digest.header('subject')).toEqual(['[Tischlerei Berger] Als Spam zurückgehalten: 1 Nachricht']);
      expect(digest.text).toMatch(
        /^1 Nachricht wurde seit der letzten Übersicht als Spam zurückgehalten\. Keine davon wurde Ihnen gemailt\.\n\n#\d+ {2}\d{1,2}\. \S+ \d{4} um \d\d:\d\d UTC {2}Bot\n {4}Billige Uhren, jetzt kaufen\.\n {4}zurückgehalten, weil: kein Nachweis, dass das Skript der Seite lief .*; ohne die Header, die jeder aktuelle Browser sendet .*\n\nAlle ansehen: /,
      );
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
