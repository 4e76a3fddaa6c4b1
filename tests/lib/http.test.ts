import { describe, expect, test } from 'vitest';
import { BODY_LIMIT_BYTES, readForm } from '../../packages/site-forms/src/lib/http/form.ts';
import { renderJson } from '../../packages/site-forms/src/lib/http/outcome.ts';

const post = (body: BodyInit, headers: Record<string, string> = {}) => new Request('http://site.test/api/contact', { method: 'POST', body, headers });

async function refusal(result: Awaited<ReturnType<typeof readForm>>) {
  if (result.ok) throw new Error('expected a refusal');
  const answer = renderJson(result.failure);
  return { status: answer.status, body: JSON.parse(answer.body!) as { success: boolean; error: string } };
}

describe('readForm', () => {
  test('reads multipart/form-data', async () => {
    const form = new FormData();
    form.append('name', 'Ada');
    await expect(readForm(post(form))).resolves.toEqual({ ok: true, fields: expect.objectContaining({ name: 'Ada' }) });
  });

  test('reads application/x-www-form-urlencoded', async () => {
    const result = await readForm(post('name=Ada&email=a%40b.co', { 'content-type': 'application/x-www-form-urlencoded' }));
    expect(result).toEqual({ ok: true, fields: expect.objectContaining({ name: 'Ada', email: 'a@b.co' }) });
  });

  test('keeps the first of duplicated fields', async () => {
    const result = await readForm(post('name=first&name=second', { 'content-type': 'application/x-www-form-urlencoded' }));
    expect(result.ok && result.fields.name).toBe('first');
  });

  test('keeps a field named __proto__ as a plain field', async () => {
    const result = await readForm(post('__proto__=x', { 'content-type': 'application/x-www-form-urlencoded' }));
    expect(result.ok && Object.getPrototypeOf(result.fields)).toBe(null);
    // biome-ignore lint/suspicious/noProto: the test is that a field named __proto__ is read as a plain field
    expect(result.ok && result.fields.__proto__).toBe('x');
  });

  test.each([
    ['JSON', 'application/json', '{"email":"a@b.co"}'],
    ['plain text', 'text/plain', 'email=a@b.co'],
    ['no content type', '', 'email=a@b.co'],
  ])('refuses %s with 415', async (_, type, body) => {
    const request = new Request('http://site.test/api/contact', { method: 'POST', body: new Blob([body], { type }) });
    const { status, body: answer } = await refusal(await readForm(request));
    expect(status).toBe(415);
    expect(answer).toEqual({ success: false, error: expect.any(String) });
  });

  test.each([
    ['gzip', 'gzip', 415],
    ['deflate', 'deflate', 415],
    ['br', 'br', 415],
    ['identity in capitals', 'IDENTITY', 200],
    ['identity', 'identity', 200],
  ])('a body with Content-Encoding %s: %i', async (_, coding, status) => {
    const result = await readForm(post('name=Ada', { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': coding }));
    if (status === 200) expect(result).toEqual({ ok: true, fields: expect.objectContaining({ name: 'Ada' }) });
    else await expect(refusal(result)).resolves.toEqual({ status: 415, body: { success: false, error: 'Send the form without a Content-Encoding' } });
  });

  test('refuses a body past the limit with 413, even without a Content-Length', async () => {
    const big = 'x'.repeat(BODY_LIMIT_BYTES + 1);
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`message=${big}`));
        controller.close();
      },
    });
    const request = new Request('http://site.test/api/contact', {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      duplex: 'half',
    } as RequestInit);
    const { status, body } = await refusal(await readForm(request));
    expect(status).toBe(413);
    expect(body.success).toBe(false);
  });

  /** A urlencoded body of exactly `bytes` bytes, sent in two chunks without a declared length. */
  function streamed(bytes: number): Request {
    const text = `a=${'x'.repeat(bytes - 2)}`;
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text.slice(0, 1000)));
        controller.enqueue(new TextEncoder().encode(text.slice(1000)));
        controller.close();
      },
    });
    return new Request('http://site.test/api/contact', {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      duplex: 'half',
    } as RequestInit);
  }

  test.each([
    [65_536, true],
    [65_537, false],
  ])('a body of %i bytes (the limit is 64 KiB) is read: %s', async (bytes, read) => {
    const result = await readForm(streamed(bytes));
    expect(result.ok).toBe(read);
    if (result.ok) expect((result.fields.a as string).length).toBe(bytes - 2);
    else expect(result.failure).toEqual({ kind: 'failure', status: 413, error: 'The form is too large; the limit is 64 KB' });
  });

  test.each([
    [65_536, 200],
    [65_537, 413],
  ])('a declared Content-Length of %i bytes with a small body: %i', async (declared, status) => {
    const result = await readForm(post('name=Ada', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(declared) }));
    expect(result.ok ? 200 : result.failure.status).toBe(status);
  });

  test('refuses a declared Content-Length past the limit with 413 before reading', async () => {
    const request = post('name=Ada', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(10 * 1024 * 1024) });
    expect((await refusal(await readForm(request))).status).toBe(413);
  });

  test('refuses a malformed multipart body with 400', async () => {
    const body = '--abc\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda'; // no closing boundary
    const request = post(body, { 'content-type': 'multipart/form-data; boundary=abc' });
    const { status, body: answer } = await refusal(await readForm(request));
    expect(status).toBe(400);
    expect(answer).toEqual({ success: false, error: 'The form could not be read' });
  });

  test('refuses multipart with the wrong boundary with 400', async () => {
    const body = '--other\r\nContent-Disposition: form-data; name="name"\r\n\r\nAda\r\n--other--\r\n';
    const request = post(body, { 'content-type': 'multipart/form-data; boundary=abc' });
    expect((await refusal(await readForm(request))).status).toBe(400);
  });
});

describe('readForm and text encodings: never a silently altered message', () => {
  const urlencoded = (charset?: string) => ({ 'content-type': `application/x-www-form-urlencoded${charset ? `; charset=${charset}` : ''}` });
  const multipart = (bytes: Uint8Array) => {
    const boundary = 'XyZ';
    const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\n`);
    const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
    return { body: new Uint8Array([...head, ...bytes, ...tail]), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
  };

  test.each([
    ['declared iso-8859-1', 'name=Zo%EB', urlencoded('iso-8859-1')],
    ['declared windows-1252 in quotes', 'name=Zo%EB', urlencoded('"windows-1252"')],
    ['undeclared, with a Latin-1 byte escaped', 'name=Zo%EB', urlencoded()],
    ['an overlong UTF-8 escape', 'name=%C0%AF', urlencoded()],
  ])('%s: 400, "send it as UTF-8"', async (_, body, headers) => {
    await expect(readForm(post(body, headers)).then(refusal)).resolves.toEqual({
      status: 400,
      body: { success: false, error: 'The form could not be read: send it as UTF-8' },
    });
  });

  test.each([
    ['without spaces', 'application/x-www-form-urlencoded;charset=iso-8859-1'],
    ['with spaces around the equals sign and quotes', 'application/x-www-form-urlencoded; charset = "ISO-8859-1"'],
    ['in a multipart post', 'multipart/form-data; boundary=XyZ; charset=windows-1252'],
  ])('another charset declared %s is refused even when every byte is ASCII: 400', async (_, type) => {
    const body = type.startsWith('multipart') ? multipart(new TextEncoder().encode('Ada')).body : 'name=Ada';
    await expect(readForm(post(body, { 'content-type': type })).then(refusal)).resolves.toEqual({
      status: 400,
      body: { success: false, error: 'The form could not be read: send it as UTF-8' },
    });
  });

  test('a multipart field with a byte that is not UTF-8: 400, "send it as UTF-8"', async () => {
    const { body, headers } = multipart(new Uint8Array([0x5a, 0x6f, 0xeb]));
    await expect(readForm(post(body, headers)).then(refusal)).resolves.toMatchObject({
      status: 400,
      body: { error: 'The form could not be read: send it as UTF-8' },
    });
  });

  test.each([
    ['declared utf-8', 'name=Zo%C3%AB', urlencoded('UTF-8'), 'Zoë'],
    ['declared utf8', 'name=Zo%C3%AB', urlencoded('utf8'), 'Zoë'],
    ['undeclared', 'name=Zo%C3%AB%F0%9F%98%80', urlencoded(), 'Zoë😀'],
    ['a lone percent sign, as curl -d sends it', 'name=100% sure', urlencoded(), '100% sure'],
    ['a real U+FFFD typed by the visitor', 'name=%EF%BF%BD', urlencoded(), '\ufffd'],
  ])('%s is read as typed', async (_, body, headers, name) => {
    await expect(readForm(post(body, headers))).resolves.toEqual({ ok: true, fields: expect.objectContaining({ name }) });
  });

  test('a multipart field in UTF-8 is read as typed', async () => {
    const { body, headers } = multipart(new TextEncoder().encode('Zoë Ångström'));
    await expect(readForm(post(body, headers))).resolves.toEqual({ ok: true, fields: expect.objectContaining({ name: 'Zoë Ångström' }) });
  });
});
