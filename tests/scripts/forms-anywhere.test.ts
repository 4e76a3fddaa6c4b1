// @vitest-environment happy-dom
import { afterEach, describe, expect, test } from 'vitest';
import { enhanceForeignForms, type SiteWords } from '../../src/scripts/forms-anywhere.ts';

/**
 * /forms.js on a page of the owner's site elsewhere (decision 0168): it takes every form whose
 * action is this server's, makes what the scripts need when the owner's markup lacks it, and
 * sends with the spec's JSON, to this server.
 */
const SERVER = 'https://forms.example.com';
const WORDS: SiteWords = {
  failed: 'Something went wrong. Please try again.',
  newsletter: { busy: 'Subscribing...', thanks: 'Thanks for subscribing!', confirmThanks: 'Check your inbox.' },
  contact: { busy: 'Sending...', thanks: "Thanks for your message! We'll get back to you soon." },
  forms: { callback: { busy: 'Calling...', thanks: 'We will call you back today.' } },
  form: { busy: 'Sending...', thanks: 'Thank you! We have received it.' },
};

/** The owner's plain markup: labels and fields, a button, nothing of ours. */
const OWNER_PAGE = `
<form id="contact" method="post" action="${SERVER}/api/contact">
  <label for="name">Name</label><input id="name" name="name">
  <label for="email">Email</label><input id="email" name="email" type="email">
  <label for="message">Message</label><textarea id="message" name="message"></textarea>
  <input type="hidden" name="_next" value="https://www.example.org/thanks/">
  <button>Send</button>
</form>
<form method="post" action="${SERVER}/api/newsletter" data-thanks="Welcome aboard!">
  <input name="email" type="email" aria-label="Email">
  <button type="submit">Subscribe</button>
</form>
<form method="post" action="${SERVER}/api/forms/callback"><input name="phone"><button>Call me</button></form>
<form method="post" action="https://elsewhere.example.net/api/contact"><input name="name"><button>Other</button></form>
<form method="get" action="/search"><input name="q"><button>Search</button></form>`;

type Call = { url: string; accept: string | null };

function server(answers: Record<string, { status: number; body: unknown }>) {
  const calls: Call[] = [];
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    calls.push({ url, accept: new Headers(init?.headers).get('accept') });
    const answer = answers[new URL(url).pathname] ?? { status: 404, body: { success: false, error: 'Not found' } };
    return new Response(JSON.stringify(answer.body), { status: answer.status, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { calls, fetchImpl };
}

function forms(): HTMLFormElement[] {
  return [...document.querySelectorAll('form')];
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

afterEach(() => {
  document.body.innerHTML = '';
});

describe('which forms it takes', () => {
  test('the three kinds whose action is this server’s, and no other', () => {
    document.body.innerHTML = OWNER_PAGE;
    expect(enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl)).toBe(3);
    const [contact, newsletter, callback, other, search] = forms();
    for (const form of [contact, newsletter, callback]) expect(form!.querySelector('[role="alert"]'), form!.action).not.toBeNull();
    for (const form of [other, search]) expect(form!.querySelector('[role="alert"]')).toBeNull();
  });

  test('a form taken once is not taken again by a second run', () => {
    document.body.innerHTML = OWNER_PAGE;
    enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl);
    expect(enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl)).toBe(0);
    expect(forms()[0]!.querySelectorAll('[role="alert"]')).toHaveLength(1);
  });

  test('a form without an action posts to its page, and is taken when the page is at one of the routes', () => {
    // Without an action the browser posts to the page's own address; here that is a route of the server.
    history.pushState(null, '', '/api/contact');
    try {
      document.body.innerHTML = '<form method="post"><input name="name"><button>Send</button></form>';
      expect(enhanceForeignForms(document, 'http://localhost:3000', WORDS, server({}).fetchImpl)).toBe(1);
    } finally {
      history.pushState(null, '', '/');
    }
  });
});

describe('what a form of the owner’s gets', () => {
  test('the field errors at the fields, from the spec’s 400, to this server’s endpoint', async () => {
    document.body.innerHTML = OWNER_PAGE;
    const { calls, fetchImpl } = server({
      '/api/contact': { status: 400, body: { success: false, errors: { email: ['Please enter a valid email address'] } } },
      '/api/challenge': { status: 200, body: { success: true } },
    });
    enhanceForeignForms(document, SERVER, WORDS, fetchImpl);
    const contact = forms()[0]!;
    contact.requestSubmit();
    await until(() => calls.some((call) => call.url === `${SERVER}/api/contact`) && !contact.querySelector('button')!.disabled);
    const email = contact.querySelector<HTMLInputElement>('#email')!;
    expect(email.getAttribute('aria-invalid')).toBe('true');
    const box = document.getElementById(email.getAttribute('aria-describedby')!);
    expect(box?.textContent).toBe('Please enter a valid email address');
    expect(box?.previousElementSibling).toBe(email);
    expect(calls.find((call) => call.url === `${SERVER}/api/contact`)?.accept).toBe('application/json');
    expect(calls.some((call) => call.url === `${SERVER}/api/challenge`)).toBe(true);
  });

  test('the thanks of the site’s language, or the owner’s own `data-thanks`', async () => {
    document.body.innerHTML = OWNER_PAGE;
    const { fetchImpl } = server({
      '/api/contact': { status: 200, body: { success: true } },
      '/api/newsletter': { status: 200, body: { success: true } },
    });
    enhanceForeignForms(document, SERVER, WORDS, fetchImpl);
    const [contact, newsletter] = forms();
    contact!.requestSubmit();
    newsletter!.requestSubmit();
    await until(() => contact!.textContent?.trim() === WORDS.contact.thanks && newsletter!.textContent?.trim() === 'Welcome aboard!');
    expect(contact!.querySelector('[role="status"]')).not.toBeNull();
  });

  test('an owner’s form’s own thanks, from the build, by its name', async () => {
    document.body.innerHTML = OWNER_PAGE;
    const { fetchImpl } = server({ '/api/forms/callback': { status: 200, body: { success: true } } });
    enhanceForeignForms(document, SERVER, WORDS, fetchImpl);
    const callback = forms()[2]!;
    callback.requestSubmit();
    await until(() => callback.textContent?.trim() === 'We will call you back today.');
  });

  test('a refusal about the whole form in its alert', async () => {
    document.body.innerHTML = OWNER_PAGE;
    const { fetchImpl } = server({
      '/api/forms/callback': { status: 429, body: { success: false, error: 'Too many attempts. Please try again in 10 minutes.' } },
    });
    enhanceForeignForms(document, SERVER, WORDS, fetchImpl);
    const callback = forms()[2]!;
    callback.requestSubmit();
    await until(() => callback.querySelector('[role="alert"]')?.textContent === 'Too many attempts. Please try again in 10 minutes.');
  });
});
