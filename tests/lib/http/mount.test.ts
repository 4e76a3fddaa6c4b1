import { afterEach, describe, expect, it } from 'vitest';
import { checkBase, mountOf, ourPath, setMount, withinMount } from '../../../packages/site-forms/src/lib/http/mount.ts';
import { siteForms } from '../../../packages/site-forms/src/integration/integration.ts';
import { createFileLinks } from '../../../packages/site-forms/src/lib/files/links.ts';
import { handleFileLink } from '../../../packages/site-forms/src/lib/pipeline/file-link.ts';
import type { Services } from '../../../packages/site-forms/src/lib/app/services.ts';
import { testEngines } from '../../support/stores.ts';
import { composeConfirmation } from '../../../packages/site-forms/src/lib/newsletter/opt-in.ts';
import { renderAdminOutcome } from '../../../packages/site-forms/src/lib/pipeline/admin-route.ts';
import { FORM_PAGES, renderPage } from '../../../packages/site-forms/src/lib/pipeline/form-view.ts';

describe("the prefix of the forms' routes (siteForms({ base }), decision 0230)", () => {
  it('takes a path of plain segments, with or without its trailing slash, and none for the root', () => {
    expect(checkBase(undefined)).toBe('');
    expect(checkBase('/')).toBe('');
    expect(checkBase('/forms/')).toBe('/forms');
    expect(checkBase('/site/forms')).toBe('/site/forms');
  });

  it('refuses what is not a path of its own, naming the option', () => {
    for (const bad of ['forms', '/forms//x', '/../admin', '/fo rms', 'https://x.example/forms', '/forms?x', 3]) {
      expect(() => checkBase(bad), String(bad)).toThrow(/siteForms\(\{ base/);
    }
  });

  it("puts Astro's base before ours, however the owner wrote it", () => {
    expect(mountOf('/', '')).toBe('');
    expect(mountOf('/', '/forms')).toBe('/forms');
    expect(mountOf('/shop/', '/forms')).toBe('/shop/forms');
    expect(mountOf('shop', '')).toBe('/shop');
  });

  it('makes our paths under the mount and reads requests back from it', () => {
    expect(ourPath('/api/contact', '')).toBe('/api/contact');
    expect(ourPath('/api/contact', '/shop/forms')).toBe('/shop/forms/api/contact');
    expect(withinMount('/shop/forms/api/contact?x=1', '/shop/forms')).toBe('/api/contact?x=1');
    expect(withinMount('/shop/forms', '/shop/forms')).toBe('/');
    expect(withinMount('/api/contact', '')).toBe('/api/contact');
  });

  it("leaves the owner's paths, and a longer segment that only starts like ours, outside", () => {
    expect(withinMount('/api/contact', '/forms')).toBeUndefined();
    expect(withinMount('/formsx/api/contact', '/forms')).toBeUndefined();
    expect(withinMount('/admin', '/forms')).toBeUndefined();
  });
});

describe('what the forms make, under the mount of the process (the built server sets it from the option)', () => {
  afterEach(() => setMount(''));
  const confirmation = () =>
    composeConfirmation(
      'reader@example.org',
      { confirm: 'c0nfirm', unsubscribe: 'uns0b' },
      {
        smtp: { url: 'smtp://127.0.0.1:25', to: 'owner@example.com', from: 'news@example.com' },
        site: { name: 'Atelier Nord', senderName: 'Atelier Nord website' },
        publicUrl: 'https://www.example.com',
        now: new Date('2026-11-25T12:00:00.000Z'),
      },
    );

  it("the confirmation mail's links and its one-click unsubscribe lead under the prefix", () => {
    setMount('/shop/forms');
    const mail = confirmation();
    expect(mail.text).toContain('https://www.example.com/shop/forms/newsletter/confirm/?token=c0nfirm');
    expect(mail.text).toContain('https://www.example.com/shop/forms/newsletter/unsubscribe/?token=uns0b');
    expect(mail.headers?.['List-Unsubscribe']).toBe('<https://www.example.com/shop/forms/api/newsletter/unsubscribe?token=uns0b>');
  });

  it('the thank-you and admin redirects lead under the prefix; at the root, as the contract names them', () => {
    setMount('/forms');
    expect(renderPage({ kind: 'accepted' }, FORM_PAGES.contact)).toMatchObject({ headers: { location: '/forms/thank-you/contact/' } });
    expect(renderAdminOutcome({ kind: 'redirect', location: '/admin' })).toMatchObject({ headers: { location: '/forms/admin' } });
    setMount('');
    expect(renderPage({ kind: 'accepted' }, FORM_PAGES.contact)).toMatchObject({ headers: { location: '/thank-you/contact/' } });
    expect(confirmation().text).toContain('https://www.example.com/newsletter/confirm/?token=c0nfirm');
  });
});

describe('siteForms({ base }) as the build reads it', () => {
  const setUp = (options: Parameters<typeof siteForms>[0]) => {
    const hook = siteForms(options).hooks['astro:config:setup'] as (parameters: unknown) => Promise<void>;
    return hook({ config: { root: new URL('file:///nowhere/'), base: '/' }, command: 'build' });
  };

  it("is refused with the starter's own server (boot: false), which serves the forms at the root only", async () => {
    await expect(setUp({ base: '/forms', boot: false })).rejects.toThrow('siteForms({ base: "/forms" }) needs the integration\'s own server');
  });

  it('is refused when it is not a path, naming the option', async () => {
    await expect(setUp({ base: 'forms' })).rejects.toThrow('siteForms({ base: "forms" })');
  });
});

describe("a webhook's signed file link under the mount", () => {
  afterEach(() => setMount(''));
  const [sqlite] = testEngines();

  it('is signed under the prefix and opens there: the file is looked up, not refused as altered', async () => {
    const { store } = await sqlite!.open();
    const links = createFileLinks(store.sql, { lifetimeSeconds: 3600 });
    setMount('/forms');
    const link = await links.sign('f7f7f7f7f7f7f7f7');
    expect(link).toMatch(/^\/forms\/api\/files\/f7f7f7f7f7f7f7f7\?expires=\d+&signature=[0-9a-f]{64}$/);
    const looked: string[] = [];
    const files = { links, records: { linkedFile: async (id: string) => void looked.push(id) } };
    const outcome = await handleFileLink({ url: `http://site.example${link}` } as never, { files } as unknown as Services);
    // Its message is gone in this store: a 404 after the signature held (an altered link is a 403).
    expect(outcome).toMatchObject({ kind: 'failure', status: 404 });
    expect(looked).toEqual(['f7f7f7f7f7f7f7f7']);
  });
});
