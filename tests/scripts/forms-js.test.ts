// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import type { SiteWords } from '../../packages/site-forms/src/scripts/forms-anywhere.ts';

/**
 * The entry of /forms.js (decision 0168) as a page of the owner's runs it: it finds this server
 * from its own `src` and takes the forms that post there, at once or, without `defer`, once the
 * page is parsed. Each test builds its page, then imports the script, whose import is its run.
 */
const WORDS: SiteWords = {
  failed: 'Something went wrong. Please try again.',
  newsletter: { busy: 'Subscribing...', thanks: 'Thanks for subscribing!', confirmThanks: 'Check your inbox.' },
  contact: { busy: 'Sending...', thanks: 'Thanks for your message!' },
  forms: {},
  form: { busy: 'Sending...', thanks: 'Thank you! We have received it.' },
};

const contactForm = (id: string, action: string) => `<form id="${id}" method="post" action="${action}"><input name="name"><button>Send</button></form>`;

/** The ids of the page's forms the script took. */
const taken = () => [...document.querySelectorAll('form')].filter((form) => form.dataset.formsEnhanced === 'true').map((form) => form.id);

/** What the browser says while the script runs: its own element, and how far the page is parsed. */
function browserSays(what: { currentScript?: HTMLScriptElement | null; readyState?: DocumentReadyState }): void {
  for (const [name, value] of Object.entries(what)) Object.defineProperty(document, name, { configurable: true, get: () => value });
}

async function runScript(): Promise<void> {
  vi.resetModules();
  vi.stubGlobal('SITE_WORDS', WORDS);
  await import('../../packages/site-forms/src/scripts/forms-js.ts');
}

afterEach(() => {
  for (const name of ['currentScript', 'readyState']) Reflect.deleteProperty(document, name);
  vi.unstubAllGlobals();
  document.body.innerHTML = '';
});

describe('/forms.js on a page', () => {
  test('with `defer` it takes at once the forms that post to the server its `src` names', async () => {
    const script = document.createElement('script');
    script.src = 'https://forms.example.com/forms.js';
    browserSays({ currentScript: script, readyState: 'complete' });
    document.body.innerHTML = contactForm('ours', 'https://forms.example.com/api/contact') + contactForm('page', '/api/contact');
    await runScript();
    expect(taken()).toEqual(['ours']);
    expect(document.querySelector('#ours [role="alert"]')).not.toBeNull();
  });

  test('with no script element to read (run as a module), the server is the page’s own', async () => {
    browserSays({ currentScript: null, readyState: 'interactive' });
    document.body.innerHTML = contactForm('page', '/api/contact') + contactForm('other', 'https://forms.example.com/api/contact');
    await runScript();
    expect(taken()).toEqual(['page']);
  });

  test('without `defer` it waits until the page is parsed, taking the forms below it too', async () => {
    browserSays({ currentScript: null, readyState: 'loading' });
    document.body.innerHTML = contactForm('above', '/api/contact');
    await runScript();
    document.body.insertAdjacentHTML('beforeend', contactForm('below', '/api/contact'));
    browserSays({ readyState: 'interactive' });
    document.dispatchEvent(new Event('DOMContentLoaded'));
    expect(taken()).toEqual(['above', 'below']);
  });
});
