// @vitest-environment happy-dom
import { afterEach, describe, expect, test, vi } from 'vitest';
import { enhanceUploadForm, formatSize, type UploadRequest } from '../../packages/site-forms/src/scripts/uploads.ts';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';

// An owner's form with a file field, as Form.astro and DefinedField.astro render it
// (tests/scripts/form-markup.test.ts checks the real one): the limits and the words in the markup.
const APPLY_MARKUP = `
<form id="apply-form" class="form" method="post" action="/api/forms/apply" enctype="multipart/form-data" aria-label="Apply"
  data-form="apply" data-thanks="Thank you for applying." data-busy="Sending..." data-failed="Something went wrong. Please try again."
  data-uploading="Sending: {percent} %" data-progress-label="Upload" data-chosen="Chosen files">
  <div class="field"><label for="apply-name">Name</label>
    <p id="apply-name-error" class="field-error" data-error-for="name"></p>
    <input id="apply-name" name="name" value="Ada" /></div>
  <div class="field"><label for="apply-cv">CV</label>
    <p id="apply-cv-error" class="field-error" data-error-for="cv"></p>
    <input id="apply-cv" name="cv" type="file" multiple accept=".pdf" data-max-size="1000" data-max-files="2"
      data-too-large="{name} is larger than 1 kB." data-too-many="Choose at most 2 files." /></div>
  <button type="submit">Apply</button>
  <p id="apply-form-error" class="form-error" role="alert" tabindex="-1"></p>
  <p id="apply-status" class="form-status" role="status" aria-live="polite"></p>
</form>`;

/** A request the test answers itself, as XMLHttpRequest would: upload progress, then the answer. */
class FakeRequest implements UploadRequest {
  static made: FakeRequest[] = [];
  method = '';
  url = '';
  headers: Record<string, string> = {};
  body: FormData | undefined;
  status = 0;
  responseText = '';
  upload = new EventTarget();
  private listeners = new EventTarget();
  constructor() {
    FakeRequest.made.push(this);
  }
  open(method: string, url: string) {
    this.method = method;
    this.url = url;
  }
  setRequestHeader(name: string, value: string) {
    this.headers[name] = value;
  }
  send(body: FormData) {
    this.body = body;
  }
  addEventListener(type: string, listener: () => void) {
    this.listeners.addEventListener(type, listener);
  }
  progress(loaded: number, total: number) {
    this.upload.dispatchEvent(Object.assign(new Event('progress'), { lengthComputable: true, loaded, total }));
  }
  answer(status: number, body: unknown) {
    this.status = status;
    this.responseText = JSON.stringify(body);
    this.listeners.dispatchEvent(new Event('load'));
  }
}

function render(markup = APPLY_MARKUP) {
  FakeRequest.made = [];
  document.body.innerHTML = markup;
  const form = document.querySelector('form')!;
  enhanceUploadForm(form, { makeRequest: () => new FakeRequest() });
  const input = document.getElementById('apply-cv') as HTMLInputElement;
  return {
    form,
    input,
    button: form.querySelector('button')!,
    status: document.getElementById('apply-status')!,
    formError: document.getElementById('apply-form-error')!,
    fieldError: document.getElementById('apply-cv-error')!,
    choose(...files: File[]) {
      // happy-dom's own setter: FormData reads the files from where a browser keeps them.
      input.files = files as unknown as FileList;
      input.dispatchEvent(new Event('change', { bubbles: true }));
    },
  };
}

const pdf = (name: string, size: number) => new File([new Uint8Array(size)], name, { type: 'application/pdf' });
const submit = (form: HTMLFormElement) => form.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));

describe('a form with a file field, with JavaScript', () => {
  test('the chosen files are listed by name and size beside the field before anything is sent', () => {
    const page = render();
    page.choose(pdf('cv.pdf', 900), pdf('letter.pdf', 12));
    const list = page.input.parentElement!.querySelector('ul')!;
    expect(list.getAttribute('aria-label')).toBe('Chosen files');
    expect([...list.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['cv.pdf (900 B)', 'letter.pdf (12 B)']);
    expect(FakeRequest.made).toEqual([]);
    page.choose(pdf('other.pdf', 5));
    expect([...list.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['other.pdf (5 B)']);
  });

  test("a file over the field's size is named at the field when chosen, and the post never starts", async () => {
    const page = render();
    page.choose(pdf('small.pdf', 1000), pdf('huge.pdf', 1001));
    expect(page.fieldError.textContent).toBe('huge.pdf is larger than 1 kB.');
    expect(page.input.getAttribute('aria-invalid')).toBe('true');
    submit(page.form);
    await vi.waitFor(() => expect(page.button.disabled).toBe(false));
    expect(FakeRequest.made).toEqual([]);
    expect(page.fieldError.textContent).toBe('huge.pdf is larger than 1 kB.');
    expect(document.activeElement).toBe(page.input);
  });

  test('more files than the field takes are refused before the upload', async () => {
    const page = render();
    page.choose(pdf('a.pdf', 1), pdf('b.pdf', 1), pdf('c.pdf', 1));
    expect(page.fieldError.textContent).toBe('Choose at most 2 files.');
    submit(page.form);
    await vi.waitFor(() => expect(page.button.disabled).toBe(false));
    expect(FakeRequest.made).toEqual([]);
    // Choosing fewer clears the message.
    page.choose(pdf('a.pdf', 1));
    expect(page.fieldError.textContent).toBe('');
    expect(page.input.hasAttribute('aria-invalid')).toBe(false);
  });

  test('the post goes with its files by XMLHttpRequest, its progress shown as a bar and as words, then the thanks', async () => {
    const page = render();
    page.choose(pdf('cv.pdf', 900));
    submit(page.form);
    await vi.waitFor(() => expect(FakeRequest.made).toHaveLength(1));
    const request = FakeRequest.made[0]!;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('http://localhost:3000/api/forms/apply');
    expect(request.headers).toEqual({ Accept: 'application/json' });
    expect((request.body!.get('cv') as File).name).toBe('cv.pdf');
    expect(request.body!.get('name')).toBe('Ada');
    const bar = page.form.querySelector('progress')!;
    expect(bar.hidden).toBe(false);
    expect(bar.getAttribute('aria-label')).toBe('Upload');
    request.progress(250, 1000);
    expect(bar.value).toBe(25);
    expect(page.status.textContent).toBe('Sending: 25 %');
    // The bar follows every percent; the words, which a screen reader reads out, each quarter only.
    request.progress(420, 1000);
    expect(bar.value).toBe(42);
    expect(page.status.textContent).toBe('Sending: 25 %');
    request.progress(1000, 1000);
    expect(bar.value).toBe(100);
    expect(page.status.textContent).toBe('Sending: 100 %');
    request.answer(200, { success: true });
    await vi.waitFor(() => expect(page.status.textContent).toBe('Thank you for applying.'));
  });

  test("the server's refusal (a file too large for it) is shown as every refusal is, and the bar goes away", async () => {
    const page = render();
    page.choose(pdf('cv.pdf', 900));
    submit(page.form);
    await vi.waitFor(() => expect(FakeRequest.made).toHaveLength(1));
    FakeRequest.made[0]!.answer(413, { success: false, error: 'The file of CV is too large.' });
    await vi.waitFor(() => expect(page.formError.textContent).toBe('The file of CV is too large.'));
    expect(page.form.querySelector('progress')!.hidden).toBe(true);
    expect(page.button.disabled).toBe(false);
  });

  test("a request that breaks off says so with the form's words", async () => {
    const page = render();
    page.choose(pdf('cv.pdf', 900));
    submit(page.form);
    await vi.waitFor(() => expect(FakeRequest.made).toHaveLength(1));
    (FakeRequest.made[0] as unknown as { listeners: EventTarget }).listeners.dispatchEvent(new Event('error'));
    await vi.waitFor(() => expect(page.formError.textContent).toBe('Something went wrong. Please try again.'));
  });
});

/** The form without its optional words: no data-uploading, data-progress-label, data-chosen, data-too-large. */
const BARE_MARKUP = APPLY_MARKUP.replace(/ data-(uploading|progress-label|chosen|too-large)="[^"]*"/g, '');

describe('answers and markup beyond the common case', () => {
  test('field errors in the answer are shown at their fields', async () => {
    const page = render();
    page.choose(pdf('cv.pdf', 900));
    submit(page.form);
    await vi.waitFor(() => expect(FakeRequest.made).toHaveLength(1));
    FakeRequest.made[0]!.answer(400, { success: false, errors: { cv: ['Only PDF files are taken.'] } });
    await vi.waitFor(() => expect(page.fieldError.textContent).toBe('Only PDF files are taken.'));
    expect(page.input.getAttribute('aria-invalid')).toBe('true');
    expect(page.formError.textContent).toBe('');
  });

  test('`errors` that are not an object leave the answer’s `error` in the alert', async () => {
    const page = render();
    page.choose(pdf('cv.pdf', 900));
    submit(page.form);
    await vi.waitFor(() => expect(FakeRequest.made).toHaveLength(1));
    FakeRequest.made[0]!.answer(400, { success: false, errors: 'cv', error: 'Please check the form.' });
    await vi.waitFor(() => expect(page.formError.textContent).toBe('Please check the form.'));
    expect(page.fieldError.textContent).toBe('');
  });

  test("an answer that is not JSON shows the form's words and gives the button back", async () => {
    const page = render();
    page.choose(pdf('cv.pdf', 900));
    submit(page.form);
    await vi.waitFor(() => expect(FakeRequest.made).toHaveLength(1));
    const request = FakeRequest.made[0]!;
    request.status = 502;
    request.responseText = '<h1>502 Bad Gateway</h1>';
    (request as unknown as { listeners: EventTarget }).listeners.dispatchEvent(new Event('load'));
    await vi.waitFor(() => expect(page.formError.textContent).toBe('Something went wrong. Please try again.'));
    expect(page.button.disabled).toBe(false);
    expect(page.button.textContent).toBe('Apply');
  });

  test('markup without its optional words: an unlabelled bar and list, the percent alone, and a too large file left to the server', async () => {
    const page = render(BARE_MARKUP);
    page.choose(pdf('huge.pdf', 1001));
    const list = page.input.parentElement!.querySelector('ul')!;
    expect(list.getAttribute('aria-label')).toBe('');
    // With no words to say it in, the field's size is not enforced here: the server refuses it in the site's language.
    expect(page.fieldError.textContent).toBe('');
    expect(page.input.hasAttribute('aria-invalid')).toBe(false);
    submit(page.form);
    await vi.waitFor(() => expect(FakeRequest.made).toHaveLength(1));
    const bar = page.form.querySelector('progress')!;
    expect(bar.getAttribute('aria-label')).toBe('');
    FakeRequest.made[0]!.progress(500, 1000);
    expect(page.status.textContent).toBe('50 %');
  });

  test('a field that is no longer a file field lists no files', () => {
    const page = render();
    page.choose(pdf('cv.pdf', 900));
    // A page's own script may turn the field into another kind; a browser then answers null for
    // its files (HTML's spec), which happy-dom does not model, so the test says it for it.
    page.input.type = 'text';
    Object.defineProperty(page.input, 'files', { value: null });
    page.input.dispatchEvent(new Event('change', { bubbles: true }));
    expect(page.input.parentElement!.querySelectorAll('li')).toHaveLength(0);
    expect(page.fieldError.textContent).toBe('');
  });

  test('sizes read as people say them: bytes, kB and MB in steps of 1000', () => {
    expect(formatSize(999, 'en')).toBe('999 B');
    expect(formatSize(1500, 'en')).toBe('1.5 kB');
    expect(formatSize(2_500_000, 'en')).toBe('2.5 MB');
    expect(formatSize(2_500_000, 'de')).toBe('2,5 MB');
  });
});

describe('with the browser’s own XMLHttpRequest', () => {
  let server: FakeHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  test('the form posts to its endpoint on a real server and shows the thanks', async () => {
    server = await startFakeHttpServer(replyJson(200, { success: true }, { 'access-control-allow-origin': '*' }));
    document.body.innerHTML = APPLY_MARKUP;
    const form = document.querySelector('form')!;
    enhanceUploadForm(form, { endpoint: `${server.url}/api/forms/apply` });
    submit(form);
    await vi.waitFor(() => expect(document.getElementById('apply-status')!.textContent).toBe('Thank you for applying.'), { timeout: 5_000 });
    // happy-dom asks first (OPTIONS) as a browser would for another origin; the post is the one that counts.
    const posts = server.requests.filter(({ method }) => method === 'POST');
    expect(posts.map(({ url }) => url)).toEqual(['/api/forms/apply']);
    expect(posts[0]!.body).toContain('name="name"\r\n\r\nAda');
  });
});
