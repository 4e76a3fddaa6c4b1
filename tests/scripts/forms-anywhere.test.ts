// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { enhanceForeignForms, type SiteWords } from '../../packages/site-forms/src/scripts/forms-anywhere.ts';

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

describe('which actions are this server’s form routes', () => {
  test('a post to another path of the server, a route with more after it, or a get is left alone', () => {
    document.body.innerHTML = `
      <form method="post" action="${SERVER}/subscribe"><input name="email"><button>A</button></form>
      <form method="post" action="${SERVER}/api/forms/callback/more"><input name="phone"><button>B</button></form>
      <form method="post" action="${SERVER}/en/api/forms/callback"><input name="phone"><button>C</button></form>
      <form method="post" action="${SERVER}/api/forms/Callback"><input name="phone"><button>D</button></form>
      <form method="get" action="${SERVER}/api/contact"><input name="name"><button>E</button></form>`;
    expect(enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl)).toBe(0);
    expect(document.querySelectorAll('[role="alert"], [data-error-for]')).toHaveLength(0);
  });
});

describe('what it adds to the owner’s markup', () => {
  test('an error box after each field the visitor fills, named after the form’s id, and none for hidden, submit or honeypot fields', () => {
    document.body.innerHTML = `
      <form id="callme" method="post" action="${SERVER}/api/forms/callback">
        <input name="phone"><input type="hidden" name="_next" value="https://www.example.org/">
        <input name="honeypot"><input type="submit" name="go" value="Call me"><button>Call me</button>
      </form>`;
    expect(enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl)).toBe(1);
    const boxes = [...document.querySelectorAll<HTMLElement>('[data-error-for]')];
    expect(boxes.map((box) => [box.id, box.tagName, box.className, box.dataset.errorFor])).toEqual([['callme-phone-error', 'P', 'field-error', 'phone']]);
    expect(boxes[0]!.previousElementSibling?.getAttribute('name')).toBe('phone');
  });

  test('without an id the boxes take a made-up prefix of the form’s kind, one per form', () => {
    document.body.innerHTML = `
      <form method="post" action="${SERVER}/api/newsletter"><input name="email"><button>Go</button></form>
      <form method="post" action="${SERVER}/api/newsletter"><input name="email"><button>Go</button></form>`;
    enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl);
    const ids = [...document.querySelectorAll('[data-error-for]')].map((box) => box.id);
    for (const id of ids) expect(id).toMatch(/^forms-newsletter-[a-z0-9]{1,6}-email-error$/);
    expect(new Set(ids).size).toBe(2);
  });

  test('a field inside its label gets its box after the label, outside the label’s text', () => {
    document.body.innerHTML = `
      <form method="post" action="${SERVER}/api/contact">
        <label id="consent-label"><input type="checkbox" name="consent"> I agree</label><button>Send</button>
      </form>`;
    enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl);
    const box = document.querySelector('[data-error-for="consent"]')!;
    expect(box.previousElementSibling?.id).toBe('consent-label');
    expect(document.getElementById('consent-label')!.querySelector('[data-error-for]')).toBeNull();
  });

  test('the owner’s own error box, alert and status are kept, not doubled', () => {
    document.body.innerHTML = `
      <form method="post" action="${SERVER}/api/contact">
        <input name="email"><span id="mine" data-error-for="email"></span>
        <div role="alert" id="my-alert"></div><div role="status" id="my-status"></div><button>Send</button>
      </form>`;
    enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl);
    expect([...document.querySelectorAll('[data-error-for]')].map((box) => box.id)).toEqual(['mine']);
    expect([...document.querySelectorAll('[role="alert"]')].map((box) => box.id)).toEqual(['my-alert']);
    expect([...document.querySelectorAll('[role="status"]')].map((box) => box.id)).toEqual(['my-status']);
  });

  test('an alert that takes the focus and a polite status region when the markup has none', () => {
    document.body.innerHTML = `<form method="post" action="${SERVER}/api/contact"><input name="email"><button>Send</button></form>`;
    enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl);
    const alert = document.querySelector('[role="alert"]')!;
    const status = document.querySelector('[role="status"]')!;
    expect([alert.tagName, alert.className, alert.getAttribute('tabindex')]).toEqual(['P', 'form-error', '-1']);
    expect([status.tagName, status.className, status.getAttribute('aria-live')]).toEqual(['P', 'form-status', 'polite']);
  });

  test('a button without a type becomes the submit button, unless the form has one already', () => {
    document.body.innerHTML = `
      <form method="post" action="${SERVER}/api/contact"><input name="email"><button id="plain">Send</button></form>
      <form method="post" action="${SERVER}/api/newsletter"><input name="email"><button type="submit">Go</button><button id="other">Later</button></form>`;
    enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl);
    expect(document.getElementById('plain')!.getAttribute('type')).toBe('submit');
    expect(document.getElementById('other')!.hasAttribute('type')).toBe(false);
  });

  test('a form with no button at all keeps posting on its own', () => {
    document.body.innerHTML = `<form method="post" action="${SERVER}/api/contact"><input name="email"></form>`;
    expect(enhanceForeignForms(document, SERVER, WORDS, server({}).fetchImpl)).toBe(0);
  });
});

describe('the newsletter’s own answers', () => {
  test('an address that awaits its confirmation mail gets the site’s sentence about it after the thanks', async () => {
    document.body.innerHTML = `<form method="post" action="${SERVER}/api/newsletter"><input name="email"><button>Go</button></form>`;
    const { fetchImpl } = server({ '/api/newsletter': { status: 200, body: { success: true, awaitingConfirmation: true } } });
    enhanceForeignForms(document, SERVER, WORDS, fetchImpl);
    const form = forms()[0]!;
    form.requestSubmit();
    await until(() => form.textContent?.trim() === 'Thanks for subscribing! Check your inbox.');
  });

  test('the owner’s own sentence about the confirmation mail wins over the site’s', async () => {
    document.body.innerHTML = `<form method="post" action="${SERVER}/api/newsletter" data-confirm-thanks="Look for our mail."><input name="email"><button>Go</button></form>`;
    const { fetchImpl } = server({ '/api/newsletter': { status: 200, body: { success: true, awaitingConfirmation: true } } });
    enhanceForeignForms(document, SERVER, WORDS, fetchImpl);
    const form = forms()[0]!;
    form.requestSubmit();
    await until(() => form.textContent?.trim() === 'Thanks for subscribing! Look for our mail.');
  });

  test('a 400 about the address shows at the email field', async () => {
    document.body.innerHTML = `<form method="post" action="${SERVER}/api/newsletter"><input name="email"><button>Go</button></form>`;
    const { fetchImpl } = server({ '/api/newsletter': { status: 400, body: { success: false, error: 'Please enter a valid email address' } } });
    enhanceForeignForms(document, SERVER, WORDS, fetchImpl);
    const form = forms()[0]!;
    form.requestSubmit();
    await until(() => form.querySelector('[data-error-for="email"]')?.textContent === 'Please enter a valid email address');
    expect(form.querySelector('[role="alert"]')!.textContent).toBe('');
  });
});

describe('after a success, the owner’s `_next` page the server named (issue 39 item 9a, decision 0210)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  test.each([
    ['the answer’s `next` is followed, after the thanks', 'https://www.example.org/thanks/', ['https://www.example.org/thanks/']],
    ['no `next`: the thanks stay in the page', undefined, []],
    ['a `next` that is not http(s) is never followed', 'javascript:alert(1)', []],
  ])('%s', async (_, next, followed) => {
    const assign = vi.spyOn(window.location, 'assign').mockImplementation(() => {});
    document.body.innerHTML = OWNER_PAGE;
    const { fetchImpl } = server({ '/api/forms/callback': { status: 200, body: { success: true, ...(next && { next }) } } });
    enhanceForeignForms(document, SERVER, WORDS, fetchImpl);
    const callback = forms()[2]!;
    callback.requestSubmit();
    await until(() => callback.textContent?.trim() === 'We will call you back today.');
    expect(assign.mock.calls.map(([url]) => String(url))).toEqual(followed);
  });
});
