import { type Challenge, solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../../packages/site-forms/src/lib/admin/password.ts';
import { buildOtherSite } from '../support/build-site.ts';
import { parseMail } from '../support/mime.ts';
import { postForm, type Site, startSite } from '../support/site.ts';
import { eventually, type FakeSmtpServer, startSmtpServer } from '../support/smtp.ts';

// The whole site built again as a German owner's (tests/fixtures/werkstatt-sued.*.config.ts: another
// name, colours, language 'de', a phone field of their own), as `SITE_CONFIG=… npm run build` builds
// it: every page a visitor reads is German, the JSON's texts are German and its shape the spec's,
// the visitor's mails are German, and so is the owner's of each message (decisions 0134, 0145).
let built: ReturnType<typeof buildOtherSite>;
let site: Site;
let smtp: FakeSmtpServer;
const PUBLIC = 'https://werkstatt.example';

beforeAll(async () => {
  built = buildOtherSite(`werkstatt-sued-${process.pid}`, 'tests/fixtures/werkstatt-sued.site.config.ts', {
    FORMS_CONFIG: 'tests/fixtures/werkstatt-sued.forms.config.ts',
  });
  smtp = await startSmtpServer();
  site = await startSite(
    {
      SMTP_URL: smtp.url(),
      CONTACT_TO: 'owner@example.com',
      CONTACT_FROM: 'forms@example.com',
      PUBLIC_URL: PUBLIC,
      AUTO_REPLY: 'true',
      // The automatic reply answers only a sender whose browser solved the page's proof (decision 0149).
      SPAM_FILTER: 'on',
      NEWSLETTER_DOUBLE_OPT_IN: 'true',
      // Three accepted posts per form and client in 10 minutes, for the 429's words.
      RATE_LIMIT_MAX: '3',
      ADMIN_PASSWORD_HASH: await hashPassword('correct horse battery staple'),
    },
    { start: built.start },
  );
}, 300_000);

afterAll(async () => {
  await site?.stop();
  await smtp?.close();
  built?.remove();
});

/** What a browser's script sends with its post. */
const SCRIPT = { origin: PUBLIC, accept: 'application/json', 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' };
/** What a browser sends with a form it posts itself, without JavaScript. */
const NAVIGATION = { origin: PUBLIC, accept: 'text/html', 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };

function parse(html: string) {
  const window = new Window();
  window.document.write(html);
  return window.document;
}

async function page(path: string) {
  return parse(await (await fetch(`${site.url}${path}`)).text());
}

const text = (doc: ReturnType<typeof parse>, selector: string) => doc.querySelector(selector)?.textContent?.replace(/\s+/g, ' ').trim();
const mailsTo = (address: string) => smtp.received.filter((mail) => mail.to.includes(address)).map((mail) => parseMail(mail.raw));

describe('the pages of a German site', () => {
  test.each([
    ['/', 'Den Newsletter abonnieren · Werkstatt Süd', 'Unser Newsletter'],
    ['/contact/', 'Kontakt · Werkstatt Süd', 'Kontakt'],
    ['/thank-you/contact/', 'Nachricht gesendet · Werkstatt Süd', 'Danke für Ihre Nachricht!'],
    ['/thank-you/newsletter/', 'Sie haben den Newsletter abonniert · Werkstatt Süd', 'Danke für Ihr Abonnement!'],
    ['/thank-you/confirm-subscription/', 'Bitte prüfen Sie Ihr Postfach · Werkstatt Süd', 'Bitte prüfen Sie Ihr Postfach'],
    ['/thank-you/unsubscribed/', 'Abgemeldet · Werkstatt Süd', 'Sie sind abgemeldet'],
    ['/thank-you/', 'Vielen Dank · Werkstatt Süd', 'Vielen Dank!'],
    ['/no-such-page', 'Seite nicht gefunden · Werkstatt Süd', 'Seite nicht gefunden'],
    ['/newsletter/confirm/?token=x', 'Abonnement bestätigen · Werkstatt Süd', 'Abonnement bestätigen'],
    ['/newsletter/unsubscribe/?token=x', 'Abmelden · Werkstatt Süd', 'Abmelden'],
  ])('%s says lang="de", its title and heading in German, and the frame around it too', async (path, title, heading) => {
    const doc = await page(path);
    expect(doc.documentElement.getAttribute('lang')).toBe('de');
    expect(doc.title).toBe(title);
    expect(text(doc, 'h1')).toBe(heading);
    expect(text(doc, '.skip-link')).toBe('Zum Inhalt springen');
    expect(doc.querySelector('nav')?.getAttribute('aria-label')).toBe('Hauptmenü');
    expect([...doc.querySelectorAll('nav a')].map((link) => link.textContent?.trim())).toEqual(['Startseite', 'Kontakt']);
    expect(text(doc, '.site-name')).toBe('Werkstatt Süd');
  });

  test('the newsletter form: its label, button, consent and the words its script shows', async () => {
    const doc = await page('/');
    const form = doc.querySelector('#newsletter-form')!;
    expect(form.getAttribute('aria-label')).toBe('Den Newsletter abonnieren');
    expect(text(doc, 'label[for="newsletter-email"]')).toBe('E-Mail-Adresse');
    expect(text(doc, '#newsletter-form button')).toBe('Abonnieren');
    expect(text(doc, '#newsletter-consent')).toBe('Ich möchte den Newsletter per E-Mail erhalten. Ich kann ihn jederzeit abbestellen.');
    expect(form.getAttribute('data-busy')).toBe('Wird abonniert …');
    expect(form.getAttribute('data-confirm-thanks')).toBe('Wir haben Ihnen eine E-Mail geschickt: Bestätigen Sie Ihr Abonnement über den Link darin.');
    expect(form.getAttribute('data-thanks')).toBe('Danke für Ihr Abonnement!');
    expect(form.getAttribute('data-failed')).toBe('Etwas ist schiefgegangen. Bitte versuchen Sie es noch einmal.');
    expect(text(doc, '.lead')).toBe(
      'Gelegentliche Neuigkeiten, direkt in Ihr Postfach. Geben Sie Ihre E-Mail-Adresse an, und wir nehmen Sie in die Liste auf. Vorher eine Frage? Schreiben Sie uns.',
    );
  });

  test('the contact form: German labels and hint, the owner’s own German field, the words its script shows', async () => {
    const doc = await page('/contact/');
    const form = doc.querySelector('#contact-form')!;
    expect([...form.querySelectorAll('label')].map((label) => label.textContent?.trim())).toEqual([
      'Name',
      'E-Mail-Adresse',
      'Nachricht',
      'Telefon',
      'Dieses Feld leer lassen',
    ]);
    expect(text(doc, '#contact-message-hint')).toBe('Mindestens 10 Zeichen.');
    expect(text(doc, '#contact-phone-hint')).toBe('Falls wir Sie lieber anrufen sollen.');
    expect(text(doc, '#contact-form button')).toBe('Nachricht senden');
    expect(form.getAttribute('data-busy')).toBe('Wird gesendet …');
    expect(form.getAttribute('data-thanks')).toBe('Danke für Ihre Nachricht! Wir melden uns bald bei Ihnen.');
  });

  test('the owner’s admin stays English, and says so to a screen reader', async () => {
    const response = await fetch(`${site.url}/admin/`, { redirect: 'manual' });
    const doc = parse(await response.text());
    expect(doc.documentElement.getAttribute('lang')).toBe('en');
    expect(text(doc, '.skip-link')).toBe('Skip to content');
    expect([...doc.querySelectorAll('nav a')].map((link) => link.textContent?.trim())).toContain('Home');
  });

  test('its colours and description are its own', async () => {
    expect(await (await fetch(`${site.url}/theme.css`)).text()).toContain('--accent: #1d5c3a;');
    expect((await page('/')).querySelector('meta[name="description"]')?.getAttribute('content')).toBe('Möbel aus dem Süden, nach Maß gefertigt.');
  });
});

describe('the JSON of a German site: the spec’s shape and statuses, German texts', () => {
  test('a refused contact message: each field’s German message, the owner’s field’s built from its label', async () => {
    const response = await postForm(`${site.url}/api/contact`, { name: 'A', email: 'nope', message: 'Kurz', phone: 'abc', honeypot: '' }, SCRIPT);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(
      '{"success":false,"errors":{"name":["Der Name muss zwischen 2 und 100 Zeichen lang sein"],"email":["Bitte geben Sie eine gültige E-Mail-Adresse ein"],"message":["Die Nachricht muss mindestens 10 Zeichen lang sein"],"phone":["„Telefon“ muss eine Telefonnummer sein"]}}',
    );
  });

  test('a filled-in honeypot', async () => {
    const fields = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Ein Tisch aus Eiche, bitte.', honeypot: 'x' };
    const response = await postForm(`${site.url}/api/contact`, fields, SCRIPT);
    expect(await response.text()).toBe('{"success":false,"errors":{"honeypot":["Dieses Feld muss leer bleiben"]}}');
  });

  test('a refused address for the newsletter', async () => {
    const response = await postForm(`${site.url}/api/newsletter`, { email: 'nope' }, SCRIPT);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe('{"success":false,"error":"Bitte geben Sie eine gültige E-Mail-Adresse ein"}');
  });

  test('a post from another website, a form too large, a method not taken', async () => {
    const foreign = await postForm(`${site.url}/api/contact`, { name: 'Ada' }, { ...SCRIPT, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(await foreign.text()).toBe('{"success":false,"error":"Die Formulare dieser Website können nicht von einer anderen Website aus gesendet werden"}');

    const large = await postForm(`${site.url}/api/contact`, { message: 'x'.repeat(70_000) }, SCRIPT);
    expect(large.status).toBe(413);
    expect(await large.text()).toBe('{"success":false,"error":"Das Formular ist zu groß; die Grenze liegt bei 64 KB"}');

    const get = await fetch(`${site.url}/api/contact`);
    expect(get.status).toBe(405);
    expect(await get.text()).toBe('{"success":false,"error":"Verwenden Sie POST für diese Adresse"}');
  });
});

describe('a German site without JavaScript', () => {
  test('a refused post: the contact page again, German, each German message at its field', async () => {
    const response = await postForm(`${site.url}/api/contact`, { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Kurz', honeypot: '' }, NAVIGATION);
    expect(response.status).toBe(400);
    const doc = parse(await response.text());
    expect(doc.documentElement.getAttribute('lang')).toBe('de');
    expect(doc.title).toBe('Fehler: Kontakt · Werkstatt Süd');
    expect(text(doc, '#contact-message-error')).toBe('Die Nachricht muss mindestens 10 Zeichen lang sein');
    expect(text(doc, '#contact-name-error')).toBe('');
  });
});

describe('the mails of a German site', () => {
  test('the sender’s automatic reply is German, and so is the owner’s mail', async () => {
    const { challenge } = (await (await fetch(`${site.url}/api/challenge`)).json()) as { challenge: Challenge };
    const altcha = Buffer.from(JSON.stringify({ challenge, solution: await solveChallenge({ challenge, deriveKey }) })).toString('base64');
    const fields = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Ein Tisch aus Eiche, bitte.', honeypot: '', altcha };
    const response = await postForm(`${site.url}/api/contact`, fields, SCRIPT);
    expect(await response.text()).toBe('{"success":true}');
    await eventually('the owner’s mail and the reply', () => mailsTo('owner@example.com').length === 1 && mailsTo('ada@example.org').length === 1);
    expect(mailsTo('owner@example.com')[0]!.header('subject')).toEqual(['[Werkstatt Süd] Neue Nachricht von Ada Lovelace']);
    // The time it was sent in German and in the site's zone (Europe/Berlin), not as UTC ISO 8601 (issue 39, item 10).
    expect(mailsTo('owner@example.com')[0]!.text).toMatch(
      /\nGesendet: \d{1,2}\. (Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember) \d{4} um \d\d:\d\d (MEZ|MESZ) \(Kontaktnachricht #\d+ auf Werkstatt Süd\)\n/,
    );
    const reply = mailsTo('ada@example.org')[0]!;
    expect(reply.header('subject')).toEqual(['Wir haben Ihre Nachricht erhalten']);
    expect(reply.text).toContain('Hallo Ada Lovelace,\n\nvielen Dank für Ihre Nachricht an Werkstatt Süd.');
  });

  test('the double opt-in’s confirmation is German, and so is its page', async () => {
    const response = await postForm(`${site.url}/api/newsletter`, { email: 'leserin@example.org' }, SCRIPT);
    expect(await response.text()).toBe('{"success":true,"awaitingConfirmation":true}');
    await eventually('the confirmation', () => mailsTo('leserin@example.org').length === 1);
    const mail = mailsTo('leserin@example.org')[0]!;
    expect(mail.header('subject')).toEqual(['Bestätigen Sie Ihr Abonnement von Werkstatt Süd']);
    expect(mail.text).toContain('Jemand, vermutlich Sie, möchte den Newsletter von Werkstatt Süd an diese Adresse erhalten.');
    const link = /https:\/\/werkstatt\.example(\/newsletter\/confirm\/\?token=\S+)/.exec(mail.text)?.[1];
    expect(link).toBeDefined();
    expect(text(await page(link!), '.lead')).toBe('Ein Klick, und der Newsletter von Werkstatt Süd kommt in Ihr Postfach.');
  });

  test('too many attempts: 429 in German, with the spec’s shape', async () => {
    let refused: Response | undefined;
    for (let i = 0; i < 10 && !refused; i++) {
      const response = await postForm(`${site.url}/api/newsletter`, { email: `leser${i}@example.org` }, SCRIPT);
      if (response.status === 429) refused = response;
    }
    expect(refused?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused?.text()).toMatch(/^\{"success":false,"error":"Zu viele Versuche\. Bitte versuchen Sie es in 10 Minuten noch einmal\."\}$/);
  });
});

describe('the owner’s spreadsheet export of a German site', () => {
  test('CSV for Excel: semicolons, German headers and the owner’s labels, Berlin time with its offset, the phone number as typed', async () => {
    const fields = { name: 'Zoë Huber', email: 'zoe@example.de', message: 'Ein Regal; aus Kirsche.', phone: '+49 30 1234567', honeypot: '' };
    expect(await (await postForm(`${site.url}/api/contact`, fields, SCRIPT)).text()).toBe('{"success":true}');
    const admin = (path: string, form: Record<string, string>, cookie = '') =>
      fetch(`${site.url}${path}`, { method: 'POST', body: new URLSearchParams(form), headers: { origin: PUBLIC, cookie }, redirect: 'manual' });
    const signIn = await admin('/admin/actions/sign-in', { password: 'correct horse battery staple' });
    const cookie = String(signIn.headers.get('set-cookie')).split(';')[0]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await (await fetch(`${site.url}/admin`, { headers: { cookie } })).text())![1]!;
    const response = await admin('/admin/actions/export', { csrf, what: 'messages', format: 'csv', bom: '1' }, cookie);
    expect(response.status).toBe(200);
    // Read as bytes: text() would drop the byte-order mark that makes Excel read UTF-8.
    const lines = Buffer.from(await response.arrayBuffer())
      .toString('utf8')
      .split('\r\n');
    expect(lines[0]).toBe('\uFEFFNr.;Eingegangen;Name;E-Mail-Adresse;Nachricht;Status;Versuche;Nächster Versuch;Letzter Fehler;Gesendet;Spam-Gründe;Telefon');
    const row = lines.find((line) => line.includes('Zoë Huber'));
    // Received now, in Berlin: an hour ahead of UTC in winter, two in summer.
    expect(row).toMatch(
      /^\d+;\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0[12]:00;Zoë Huber;zoe@example\.de;"Ein Regal; aus Kirsche\.";[^;]+;\d+;[^;]*;;[^;]*;;\+49 30 1234567$/,
    );
  });
});
