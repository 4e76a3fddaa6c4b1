// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';

// The configured contact endpoint as the build would inline it: this test's server, known once it listens.
const configured = vi.hoisted(() => ({ endpoint: '' }));
vi.mock('astro:env/client', () => ({
  get CONTACT_FORM_ENDPOINT() {
    return configured.endpoint;
  },
}));

/** A form as the page serves it, `extra` inside before its button. */
function form(attributes: string, extra: string): string {
  return `<form ${attributes} method="post" enctype="multipart/form-data" data-busy="Sending..." data-thanks="Thanks." data-failed="Something went wrong.">
    <input name="name" value="Ada">${extra}<button type="submit">Send</button><p role="alert"></p><p role="status"></p></form>`;
}

const FILE = '<input name="cv" type="file">';

let server: FakeHttpServer | undefined;
afterEach(async () => {
  vi.unstubAllGlobals();
  await server?.close();
  server = undefined;
});

/** Runs the page script on the page as it is now, as the browser runs it once. */
async function runScript(): Promise<void> {
  vi.resetModules();
  await import('../../packages/site-forms/src/scripts/upload-forms.ts');
}

/** The requests the server answered other than the browser's preflight (OPTIONS), as `METHOD path`. */
const received = () => server!.requests.filter(({ method }) => method !== 'OPTIONS').map(({ method, url }) => `${method} ${url}`);

describe('the upload page script', () => {
  test('enhances the forms with a file field, and only those', async () => {
    document.body.innerHTML =
      form('id="apply" data-form="apply" action="/api/forms/apply"', FILE) +
      form('id="quote" data-form="quote" action="/api/forms/quote"', '') +
      form('id="contact" data-contact-form action="/api/contact"', FILE) +
      form('id="plain" action="/api/forms/plain"', FILE);
    await runScript();
    const enhanced = [...document.querySelectorAll('form')].filter((each) => each.querySelector('progress')).map((each) => each.id);
    expect(enhanced).toEqual(['apply', 'contact']);
  });

  test('the contact form asks for its proof at, and posts to, the configured endpoint; an owner’s form to its action', async () => {
    server = await startFakeHttpServer((request, res, req) => {
      const body = request.url === '/api/challenge' ? { success: false, error: 'No challenge today' } : { success: true };
      replyJson(200, body, { 'access-control-allow-origin': '*' })(request, res, req);
    });
    configured.endpoint = `${server.url}/api/contact`;
    document.body.innerHTML =
      form('id="contact" data-contact-form action="/api/contact"', FILE) + form(`id="apply" data-form="apply" action="${server.url}/api/forms/apply"`, FILE);
    await runScript();

    const contact = document.querySelector<HTMLFormElement>('#contact')!;
    contact.requestSubmit();
    await vi.waitFor(() => expect(contact.textContent).toBe('Thanks.'), { timeout: 5_000 });
    expect(received()).toEqual(['GET /api/challenge', 'POST /api/contact']);

    const apply = document.querySelector<HTMLFormElement>('#apply')!;
    apply.requestSubmit();
    await vi.waitFor(() => expect(apply.textContent).toBe('Thanks.'), { timeout: 5_000 });
    expect(received()).toEqual(['GET /api/challenge', 'POST /api/contact', 'GET /api/challenge', 'POST /api/forms/apply']);
  });
});
