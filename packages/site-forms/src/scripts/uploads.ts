import { clearFieldErrors, enhanceForm, errorText, type FormAnswer, followNext, formWords, showFieldErrors, showThanks } from './form-ui.ts';

/**
 * A form with a file field, with JavaScript: the chosen files listed by name and size beside
 * their field, a file too large or one too many named there before a byte is sent, and the post
 * made by XMLHttpRequest, whose upload reports its progress (fetch reports none), shown as a
 * bar and, for screen readers, as words in the form's status.
 * Hint: loaded only on a page whose form has a file field (UploadScript.astro), so the
 * other pages' script stays within its budget. The limits and the words are the markup's
 * (DefinedField.astro, in the site's language): the server stays the judge.
 */

/** The part of XMLHttpRequest the upload uses; tests give one of their own. */
export type UploadRequest = {
  upload: EventTarget;
  status: number;
  responseText: string;
  open(method: string, url: string): void;
  setRequestHeader(name: string, value: string): void;
  send(body: FormData): void;
  addEventListener(type: 'load' | 'error' | 'abort' | 'timeout', listener: () => void): void;
};

/** Where the form posts (its `action` unless given), `makeRequest` for tests; `beforeSend` is awaited first (the proof of work). */
export type UploadOptions = { endpoint?: string; makeRequest?: () => UploadRequest; beforeSend?: (() => Promise<void>) | undefined };

/** Enhances an owner's form that has a file field; see the module's comment. */
export function enhanceUploadForm(
  form: HTMLFormElement,
  { endpoint = form.action, makeRequest = () => new XMLHttpRequest(), beforeSend }: UploadOptions = {},
): void {
  const words = formWords(form);
  const inputs = [...form.querySelectorAll<HTMLInputElement>('input[type="file"]')];
  for (const input of inputs) {
    input.addEventListener('change', () => {
      listChosen(form, input);
      showFileProblems(form, inputs);
    });
  }
  const bar = progressBar(form);
  enhanceForm(form, words, async ({ status, error }) => {
    clearFieldErrors(form);
    if (showFileProblems(form, inputs)) return;
    if (beforeSend) await beforeSend();
    bar.value = 0;
    bar.hidden = false;
    let said = -1;
    let answer: FormAnswer;
    try {
      answer = await postWithProgress(form, endpoint, makeRequest(), (percent) => {
        bar.value = percent;
        // Said each quarter, not each percent: a screen reader would read out a queue of numbers.
        const quarter = Math.floor(percent / 25) * 25;
        if (quarter === said) return;
        said = quarter;
        status.textContent = (form.dataset.uploading ?? '{percent} %').replace('{percent}', String(quarter));
      });
    } finally {
      bar.hidden = true;
      status.textContent = '';
    }
    if (answer.success === true) {
      showThanks(form, status, words.thanks);
      followNext(form, answer);
    } else if (answer.errors && typeof answer.errors === 'object') showFieldErrors(form, answer.errors as Record<string, unknown>, error, words.failed);
    else error.textContent = errorText(answer, words.failed);
  });
}

/**
 * Posts the form's data to `endpoint` with `request`, asking for JSON, reporting the upload in whole percent
 * (each once); answers the JSON with its status, and throws when the request fails or the answer is not JSON.
 */
export function postWithProgress(form: HTMLFormElement, endpoint: string, request: UploadRequest, onProgress: (percent: number) => void): Promise<FormAnswer> {
  return new Promise((resolve, reject) => {
    let shown = -1;
    request.upload.addEventListener('progress', (event) => {
      const { lengthComputable, loaded, total } = event as ProgressEvent;
      if (!lengthComputable || total === 0) return;
      const percent = Math.floor((loaded / total) * 100);
      if (percent === shown) return;
      shown = percent;
      onProgress(percent);
    });
    request.addEventListener('load', () => {
      try {
        resolve({ ...(JSON.parse(request.responseText) as FormAnswer), status: request.status });
      } catch (error) {
        reject(error);
      }
    });
    for (const type of ['error', 'abort', 'timeout'] as const) request.addEventListener(type, () => reject(new Error(`upload ${type}`)));
    request.open('POST', endpoint);
    // Accept tells the server this is the script, so it answers JSON rather than a page.
    request.setRequestHeader('Accept', 'application/json');
    request.send(new FormData(form));
  });
}

/** The form's progress bar, made once before its submit button, hidden until a post starts. */
function progressBar(form: HTMLFormElement): HTMLProgressElement {
  const bar = document.createElement('progress');
  bar.max = 100;
  bar.value = 0;
  bar.hidden = true;
  bar.className = 'form-progress';
  bar.setAttribute('aria-label', form.dataset.progressLabel ?? '');
  form.querySelector('button[type="submit"]')?.before(bar);
  return bar;
}

/** Lists the files chosen in `input` right after it, replacing the list of an earlier choice. */
function listChosen(form: HTMLFormElement, input: HTMLInputElement): void {
  let list = input.nextElementSibling;
  if (!(list instanceof HTMLUListElement)) {
    list = document.createElement('ul');
    list.className = 'field-files';
    (list as HTMLUListElement).setAttribute('aria-label', form.dataset.chosen ?? '');
    input.after(list);
  }
  const items = [...(input.files ?? [])].map((file) => {
    const item = document.createElement('li');
    item.textContent = `${file.name} (${formatSize(file.size)})`;
    return item;
  });
  list.replaceChildren(...items);
}

/**
 * Shows at each file field what its limits refuse (a file too large, by name; too many files),
 * the focus on the first such field, and answers whether any did.
 */
function showFileProblems(form: HTMLFormElement, inputs: readonly HTMLInputElement[]): boolean {
  const problems: Record<string, string> = {};
  for (const input of inputs) {
    const problem = fileProblem(input);
    const box = form.querySelector<HTMLElement>(`[data-error-for="${CSS.escape(input.name)}"]`);
    if (problem) problems[input.name] = problem;
    else if (box) {
      box.textContent = '';
      input.removeAttribute('aria-invalid');
    }
  }
  if (Object.keys(problems).length === 0) return false;
  const formError = form.querySelector<HTMLElement>('[role="alert"]')!;
  showFieldErrors(form, problems, formError, '');
  return true;
}

/** What the field's own limits (`data-max-files`, `data-max-size`) say of its files, or undefined. */
function fileProblem(input: HTMLInputElement): string | undefined {
  const files = [...(input.files ?? [])];
  const maxFiles = Number(input.dataset.maxFiles ?? Number.POSITIVE_INFINITY);
  if (files.length > maxFiles) return input.dataset.tooMany;
  const maxSize = Number(input.dataset.maxSize ?? Number.POSITIVE_INFINITY);
  const large = files.find((file) => file.size > maxSize);
  return large && (input.dataset.tooLarge ?? '').replace('{name}', large.name);
}

/** A size as people read it: bytes, kB or MB (powers of 1000, as the field's hint says them), in the page's language. */
export function formatSize(bytes: number, language = document.documentElement.lang || 'en'): string {
  const [value, unit] = bytes < 1000 ? [bytes, 'B'] : bytes < 1_000_000 ? [bytes / 1000, 'kB'] : [bytes / 1_000_000, 'MB'];
  return `${new Intl.NumberFormat(language, { maximumFractionDigits: 1 }).format(value)} ${unit}`;
}
