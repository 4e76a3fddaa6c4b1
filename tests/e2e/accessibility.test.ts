import AxeBuilder from '@axe-core/playwright';
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { loadsPage, openPage, screenshotAtWidths } from './support/browser.ts';
import { type Stack, startStack } from './support/stack.ts';

/**
 * Every visitor can use the forms: no axe violations at WCAG 2.2 A and AA in every state,
 * a keyboard alone reaches and sends both forms, the messages reach screen readers, and
 * the pages reflow at 320 px and at 200% zoom. Each state is photographed as it is checked.
 */
let stack: Stack;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.stop());
afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

async function visit(path: string, options: BrowserContextOptions = {}): Promise<Page> {
  const { context, page } = await openPage(stack.browser, options);
  contexts.push(context);
  await page.goto(`${stack.site.url}${path}`);
  return page;
}

/** The tags of WCAG 2.0, 2.1 and 2.2 at levels A and AA. */
const WCAG_22_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** Runs axe on the page and fails with the rule ids and the elements at fault. */
async function expectNoViolations(page: Page, what: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).withTags(WCAG_22_AA).analyze();
  const found = violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(found, `axe on ${what}`).toEqual([]);
}

type Form = 'newsletter' | 'contact';
type State = 'empty' | 'error' | 'success';

/** Brings a freshly opened page of `form` into `state`, as a visitor with JavaScript would. */
const REACH: Record<Form, Record<State, (page: Page) => Promise<void>>> = {
  newsletter: {
    empty: async () => {},
    error: async (page) => {
      await page.getByLabel('Email address').fill('reader@localhost');
      await page.getByRole('button', { name: 'Subscribe' }).click();
      await page.locator('#newsletter-email-error').getByText('Please enter a valid email address').waitFor();
    },
    success: async (page) => {
      await page.getByLabel('Email address').fill('reader@example.com');
      await page.getByRole('button', { name: 'Subscribe' }).click();
      await page.getByText('Thanks for subscribing!').waitFor();
    },
  },
  contact: {
    empty: async () => {},
    error: async (page) => {
      // Values the browser accepts and the server refuses, so every field shows a message.
      await page.getByLabel('Name', { exact: true }).fill('A ');
      await page.getByLabel('Email address').fill('ada@localhost');
      await page.getByLabel('Message').fill('Hi        ');
      await page.getByRole('button', { name: 'Send message' }).click();
      await page.locator('#contact-message-error').getByText('Message must be at least 10 characters').waitFor();
    },
    success: async (page) => {
      await page.getByLabel('Name', { exact: true }).fill('Ada Lovelace');
      await page.getByLabel('Email address').fill('ada@example.org');
      await page.getByLabel('Message').fill('Hello! I would like to know more about your work.');
      await page.getByRole('button', { name: 'Send message' }).click();
      await page.getByText("Thanks for your message! We'll get back to you soon.").waitFor();
    },
  },
};
const PATHS: Record<Form, string> = { newsletter: '/', contact: '/contact' };
const STATES = (['newsletter', 'contact'] as const).flatMap((form) => (['empty', 'error', 'success'] as const).map((state) => [form, state] as const));

describe('axe: WCAG 2.2 A and AA, in every state, light and dark', () => {
  test.each(STATES)('%s form, %s: no violations, and a screenshot at 375 and 1280 px', async (form, state) => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const page = await visit(PATHS[form], { colorScheme });
      await REACH[form][state](page);
      await expectNoViolations(page, `${PATHS[form]} (${form} ${state}, ${colorScheme})`);
      if (colorScheme === 'light') await screenshotAtWidths(page, `${form}-${state}`);
    }
  });

  test('the pages a visitor without JavaScript gets: the form again, and the thank-you page', async () => {
    // axe runs as a script, so these pages are reached with JavaScript on but posted the way a
    // browser without it does: form.submit() skips the script's submit listener.
    const page = await visit('/contact');
    await page.getByLabel('Name', { exact: true }).fill('A ');
    await page.getByLabel('Email address').fill('ada@example.org');
    await page.getByLabel('Message').fill('Hello! I would like to know more.');
    await postNatively(page, '#contact-form');
    await expect(page.locator('#contact-name-error').textContent()).resolves.toBe('Name must be between 2 and 100 characters');
    await expectNoViolations(page, 'the contact form shown again');

    const newsletter = await visit('/');
    await newsletter.getByLabel('Email address').fill('reader@localhost');
    await postNatively(newsletter, '#newsletter-form');
    await expect(newsletter.locator('#newsletter-email-error').textContent()).resolves.toBe('Please enter a valid email address');
    await expectNoViolations(newsletter, 'the newsletter form shown again');

    await newsletter.getByLabel('Email address').fill('reader@example.com');
    await postNatively(newsletter, '#newsletter-form');
    expect(new URL(newsletter.url()).pathname).toBe('/thank-you/newsletter/');
    await expectNoViolations(newsletter, 'the thank-you page');
  });
});

/** Posts a form the way the browser does without the script, and waits for the page it loads. */
async function postNatively(page: Page, form: string): Promise<void> {
  await loadsPage(page, () => page.locator(form).evaluate((element: HTMLFormElement) => element.submit()));
}

/** What the keyboard focus is on: a field or button by id, a link by its address. */
function focused(page: Page) {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    if (!element || element === document.body) return { name: 'body', ring: false };
    const style = getComputedStyle(element);
    return {
      name: element.id || element.getAttribute('href') || element.tagName,
      // The ring a keyboard user sees: :focus-visible applies and draws a real outline.
      ring: element.matches(':focus-visible') && style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) > 0,
    };
  });
}

/** Presses Tab `count` times from the top of the page and records where the focus goes. */
async function tabOrder(page: Page, count: number) {
  const stops = [];
  for (let i = 0; i < count; i++) {
    await page.keyboard.press('Tab');
    stops.push(await focused(page));
  }
  return stops;
}

/** The header's stops before the content: the skip link, the site name, then the navigation. */
const HEADER = ['#main', '/', '/', '/contact'];

describe('a keyboard alone', () => {
  test('/contact: Tab reaches every field and the button in order, never the honeypot, always with a visible ring', async () => {
    const page = await visit('/contact');
    const stops = await tabOrder(page, 8);
    expect(stops.map((stop) => stop.name)).toEqual([...HEADER, 'contact-name', 'contact-email', 'contact-message', 'BUTTON']);
    expect(stops.filter((stop) => !stop.ring)).toEqual([]);
    // One more Tab leaves the form for the page's end, not for the trap.
    expect((await tabOrder(page, 1))[0]!.name).not.toBe('contact-honeypot');
  });

  test('/: Tab reaches the email field and the button in order, with a visible ring', async () => {
    const page = await visit('/');
    const stops = await tabOrder(page, 7);
    expect(stops.map((stop) => stop.name)).toEqual([...HEADER, '/contact', 'newsletter-email', 'BUTTON']);
    expect(stops.filter((stop) => !stop.ring)).toEqual([]);
  });

  test('/contact: typed and sent with the keyboard; after a refusal the focus is on the first invalid field', async () => {
    const page = await visit('/contact');
    await tabOrder(page, 5);
    await page.keyboard.type('Ada Lovelace');
    await page.keyboard.press('Tab');
    await page.keyboard.type('ada@localhost');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Hello! I would like to know more about your work.');
    // Enter in a one-line field submits the form.
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.locator('#contact-email-error').getByText('Please enter a valid email address').waitFor();
    await expect(focused(page)).resolves.toMatchObject({ name: 'contact-email' });

    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('ada@example.org');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText("Thanks for your message! We'll get back to you soon.").waitFor();
  });

  test('without JavaScript, the form shown again puts the focus on the first invalid field', async () => {
    const page = await visit('/contact', { javaScriptEnabled: false });
    await tabOrder(page, 5);
    await page.keyboard.type('Ada Lovelace');
    await page.keyboard.press('Tab');
    await page.keyboard.type('ada@localhost');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Hello! I would like to know more about your work.');
    await page.keyboard.press('Shift+Tab');
    await expect(loadsPage(page, () => page.keyboard.press('Enter'))).resolves.toBe(400);
    // The browser applies autofocus while it renders the loaded page, not at once on load.
    await expect.poll(async () => (await focused(page)).name).toBe('contact-email');
  });

  test('/: Enter in the email field subscribes', async () => {
    const page = await visit('/');
    await tabOrder(page, 6);
    await page.keyboard.type('keys@example.com');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Thanks for subscribing!').waitFor();
  });
});

describe('for screen readers', () => {
  test.each([
    ['newsletter', 'success', 'status', '#newsletter-status'],
    ['contact', 'success', 'status', '#contact-status'],
  ] as const)('%s form, %s: the text is in a live region (role %s)', async (form, state, role, selector) => {
    const page = await visit(PATHS[form]);
    // Live regions announce changes, so they must be in the page before the text arrives.
    await expect(page.locator(selector).getAttribute('role')).resolves.toBe(role);
    await REACH[form][state](page);
    await expect(page.locator(selector).textContent()).resolves.not.toBe('');
    await expect(page.getByRole(role).filter({ hasText: /\S/ }).count()).resolves.toBeGreaterThan(0);
  });

  test('newsletter form, error: the focus moves to the address field, which the message describes (as without JavaScript)', async () => {
    const page = await visit('/');
    await REACH.newsletter.error(page);
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('newsletter-email');
    await expect(page.locator('#newsletter-email').getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(
      page.getByRole('textbox', { name: 'Email address' }).evaluate((input) => (input as HTMLInputElement).ariaDescribedByElements?.map((e) => e.textContent)),
    ).resolves.toEqual(['Please enter a valid email address']);
  });

  test.each([
    ['/', ['newsletter-email']],
    ['/contact', ['contact-name', 'contact-email', 'contact-message']],
  ] as const)('%s: every field has a visible label, not a placeholder, and name and email have autocomplete', async (path, ids) => {
    const page = await visit(path);
    for (const id of ids) {
      const label = page.locator(`label[for="${id}"]`);
      await expect(label.isVisible()).resolves.toBe(true);
      const box = await label.boundingBox();
      expect(box!.width).toBeGreaterThan(10);
      await expect(page.locator(`#${id}`).getAttribute('placeholder')).resolves.toBeNull();
    }
    for (const [id, value] of [
      ['contact-name', 'name'],
      ['contact-email', 'email'],
      ['newsletter-email', 'email'],
    ] as const) {
      if ((ids as readonly string[]).includes(id)) await expect(page.locator(`#${id}`).getAttribute('autocomplete')).resolves.toBe(value);
    }
  });
});

describe('reflow', () => {
  // 200% zoom halves the CSS width a window offers: a 1280 px window zoomed to 200% lays
  // pages out in 640 CSS px, at twice the pixel density. A 640 px viewport with
  // deviceScaleFactor 2 is that layout, drawn the same way.
  const SIZES = [
    ['320 px wide', { viewport: { width: 320, height: 640 } }],
    ['200% zoom', { viewport: { width: 640, height: 400 }, deviceScaleFactor: 2 }],
  ] as const;
  const CASES = SIZES.flatMap(([size, options]) => STATES.map(([form, state]) => [size, form, state, options] as const));

  test.each(CASES)('%s: the %s form, %s, needs no horizontal scrolling', async (_, form, state, options) => {
    const page = await visit(PATHS[form], options);
    await REACH[form][state](page);
    const { scrollWidth, clientWidth } = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
    }));
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
  });

  test('320 px wide: the thank-you page needs no horizontal scrolling either', async () => {
    const page = await visit('/thank-you/contact/', { viewport: { width: 320, height: 640 } });
    await expect(page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).resolves.toBe(true);
  });
});
