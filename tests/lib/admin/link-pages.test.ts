// @vitest-environment node
// Hint: .astro pages render only under Vitest's server transform, which the node environment uses
// (tests/scripts/markup.test.ts); the page is then read in a happy-dom Window of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { experimental_AstroContainer as AstroContainer } from 'astro/container';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import ResetPage from '../../../packages/site-forms/src/integration/pages/admin/reset.astro';
import WelcomePage from '../../../packages/site-forms/src/integration/pages/admin/welcome/[token].astro';
import { openStore, type Store } from '../../../packages/site-forms/src/lib/database/database.ts';
import { silentLogger } from '../../../packages/site-forms/src/lib/log.ts';
import { createLinks, type Links } from '../../../packages/site-forms/src/lib/people/links.ts';
import { TEST_DATABASE } from '../../support/stores.ts';

/**
 * The pages links lead to (issue 42 step S6): the welcome page's GET reads its link without using
 * it (mail scanners open links first), sends no Referer and is never cached; one page for a link
 * that cannot be used; the reset page answers alike whoever asked, and exists only with SMTP.
 */
let container: AstroContainer;
let store: Store;
let links: Links;
const dataDir = mkdtempSync(join(tmpdir(), 'site-forms-link-pages-'));

beforeAll(async () => {
  container = await AstroContainer.create();
  store = openStore({ ...TEST_DATABASE, url: undefined, dataDir }, silentLogger);
  await store.ready;
  links = createLinks(store.sql, { passwordHash: undefined, contactTo: undefined });
});
afterAll(async () => {
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The locals our server hands a page: the admin's team and the configuration it reads the origin from. */
function locals(mailOn = true, passkeysOn = false): App.Locals {
  return {
    services: {
      admin: { isOn: async () => true, team: { links, mail: { on: mailOn }, publicUrl: 'https://site.test' }, passkeys: passkeysOn ? {} : undefined },
      config: { publicUrl: 'https://site.test', allowedOrigins: [] },
    },
  } as unknown as App.Locals;
}

async function read(response: Response) {
  const document = new Window().document;
  document.body.innerHTML = await response.text();
  return document;
}

describe('the welcome page', () => {
  test('GET shows the form twice without using the link, with no Referer and no cache', async () => {
    const made = await links.invite({ email: 'eddie@example.org', role: 'editor', forms: ['contact'], createdBy: 'person:1' }, new Date());
    if (!('token' in made)) throw new Error('not invited');
    for (let i = 0; i < 2; i++) {
      const response = await container.renderToResponse(WelcomePage, {
        locals: locals(),
        params: { token: made.token },
        request: new Request(`https://site.test/admin/welcome/${made.token}`),
      });
      expect([response.status, response.headers.get('referrer-policy'), response.headers.get('cache-control')]).toEqual([200, 'same-origin', 'no-store']);
      const page = await read(response);
      expect(page.querySelector('h1')?.textContent).toBe('Welcome');
      const form = page.querySelector('form[action="/admin/actions/accept-link"]');
      expect((form?.querySelector('input[name="token"]') as unknown as HTMLInputElement | null)?.value).toBe(made.token);
      expect(form?.querySelector('input[name="password"]')?.getAttribute('minlength')).toBe('12');
      expect(form?.querySelector('input[name="name"]')).not.toBeNull();
    }
    expect(await links.accept(made.token, { name: 'Eddie', passwordHash: null }, new Date())).toMatchObject({ ok: true });
    const used = await container.renderToResponse(WelcomePage, {
      locals: locals(),
      params: { token: made.token },
      request: new Request(`https://site.test/admin/welcome/${made.token}`),
    });
    expect(used.status).toBe(404);
    expect((await read(used)).querySelector('h1')?.textContent).toBe('This link cannot be used');
  });
});

describe('a passkey instead of a password on the welcome page (decision 0298)', () => {
  const welcome = async (passkeysOn: boolean) => {
    const made = await links.invite({ email: `pia-${passkeysOn}@example.org`, role: 'reader', forms: [], createdBy: 'cli' }, new Date());
    if (!('token' in made)) throw new Error('not invited');
    const response = await container.renderToResponse(WelcomePage, {
      locals: locals(true, passkeysOn),
      params: { token: made.token },
      request: new Request(`https://site.test/admin/welcome/${made.token}`),
    });
    return read(response);
  };

  test('while the site has passkeys, the choice is in the form, hidden until the script shows it; the password stays required', async () => {
    const page = await welcome(true);
    const form = page.querySelector('form[action="/admin/actions/accept-link"]')!;
    const choice = form.querySelector('[data-passkey-instead]');
    expect(choice?.hasAttribute('hidden')).toBe(true);
    const box = choice?.querySelector('input[type="checkbox"]');
    expect(box?.hasAttribute('name')).toBe(false);
    expect(page.querySelector(`label[for="${box?.id}"]`)?.textContent?.trim()).toBe('Use a passkey instead of a password');
    expect(form.querySelector('input[name="password"]')?.hasAttribute('required')).toBe(true);
  });

  test('without passkeys on the site, the page is the password form as before', async () => {
    const page = await welcome(false);
    expect(page.querySelector('[data-passkey-instead]')).toBeNull();
    expect(page.querySelector('input[name="password"]')?.hasAttribute('required')).toBe(true);
  });
});

describe('the reset page', () => {
  test('a form for the email, then one answer', async () => {
    const form = await read(await container.renderToResponse(ResetPage, { locals: locals(), request: new Request('https://site.test/admin/reset') }));
    expect(form.querySelector('form[action="/admin/actions/request-reset"] input[name="email"]')).not.toBeNull();
    const answer = await read(await container.renderToResponse(ResetPage, { locals: locals(), request: new Request('https://site.test/admin/reset?sent=1') }));
    expect(answer.querySelector('#reset-answer')?.textContent?.trim()).toBe(
      'If this address belongs to someone here, a link is on its way. It works once, for an hour.',
    );
  });
});
