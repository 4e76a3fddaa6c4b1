import { connect } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type FakeHttpServer, replyJson, startFakeHttpServer } from '../support/fake-http.ts';
import { type Site, startSite } from '../support/site.ts';

/**
 * The endpoints are public: this suite sends what bots and broken clients send, over real
 * HTTP to the built server, and checks the answer and that nothing was stored or subscribed.
 */
let site: Site;
let mailchimp: FakeHttpServer;
let port: number;

beforeAll(async () => {
  mailchimp = await startFakeHttpServer(replyJson(200, {}));
  site = await startSite({ MAILCHIMP_API_KEY: 'k-us1', MAILCHIMP_LIST_ID: 'l', MAILCHIMP_API_BASE_URL: `${mailchimp.url}/3.0` });
  port = Number(new URL(site.url).port);
});
afterAll(async () => {
  await site.stop();
  await mailchimp.close();
});

let storedBefore = 0;
beforeEach(() => {
  storedBefore = storedCount();
  mailchimp.requests.length = 0;
});

function storedCount(): number {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM submissions').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Sends raw bytes and reads the whole answer: status, headers, body. */
function raw(request: string | Buffer, { timeoutMs = 5000 } = {}): Promise<{ status: number; head: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.setEncoding('latin1').on('data', (c: string) => (text += c));
    socket.on('end', () => {
      const [head = '', ...rest] = text.split('\r\n\r\n');
      let body = rest.join('\r\n\r\n');
      if (/transfer-encoding: chunked/i.test(head)) body = dechunk(body);
      resolve({ status: Number(head.split(' ')[1]), head, body });
    });
    socket.on('error', reject);
    setTimeout(() => reject(new Error(`no answer: ${text}`)), timeoutMs);
  });
}

function dechunk(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const newline = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, newline), 16);
    if (!size) return out;
    out += rest.slice(newline + 2, newline + 2 + size);
    rest = rest.slice(newline + 2 + size + 2);
  }
}

function httpPost(path: string, contentType: string | null, body: string | Buffer, extra = ''): string | Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n${contentType ? `Content-Type: ${contentType}\r\n` : ''}Content-Length: ${bytes.length}\r\n${extra}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes]);
}

function multipart(parts: Array<[string, string, string?]>, boundary = 'XyZ'): string {
  const fields = parts.map(
    ([name, value, filename]) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n${value}\r\n`,
  );
  return [...fields, `--${boundary}--\r\n`].join('');
}

const validContact: Array<[string, string]> = [
  ['name', 'Ada Lovelace'],
  ['email', 'ada@example.com'],
  ['message', 'Hello, this is a long enough message.'],
  ['honeypot', ''],
];

function expectRefused(answer: { status: number; head: string; body: string }, status: number) {
  expect(answer.status).toBe(status);
  expect(answer.head).toMatch(/content-type: application\/json/i);
  expect(JSON.parse(answer.body)).toMatchObject({ success: false });
  expect(answer.body).not.toMatch(/at .*\.(m?js|ts):\d+/); // no stack trace
  expect(storedCount()).toBe(storedBefore);
  expect(mailchimp.requests).toHaveLength(0);
}

describe('malformed and unexpected forms', () => {
  test('all fields missing: 400 with errors for each required field', async () => {
    const answer = await raw(httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart([])));
    expectRefused(answer, 400);
    expect(Object.keys(JSON.parse(answer.body).errors).sort()).toEqual(['email', 'message', 'name']);
  });

  test('duplicated fields: the first counts, and a bad first value is refused', async () => {
    const answer = await raw(httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart([['name', 'A'], ...validContact])));
    expectRefused(answer, 400);
    expect(JSON.parse(answer.body).errors).toEqual({ name: [expect.any(String)] });
  });

  test('a file where a text field is expected: 400 for that field', async () => {
    const answer = await raw(
      httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart([['name', 'Ada Lovelace', 'evil.exe'], ...validContact.slice(1)])),
    );
    expectRefused(answer, 400);
    expect(Object.keys(JSON.parse(answer.body).errors)).toEqual(['name']);
  });

  test('a file as the newsletter email: 400 with the message of the spec', async () => {
    const answer = await raw(httpPost('/api/newsletter', 'multipart/form-data; boundary=XyZ', multipart([['email', 'a@b.co', 'a.txt']])));
    expectRefused(answer, 400);
    expect(JSON.parse(answer.body)).toEqual({ success: false, error: 'Please enter a valid email address' });
  });

  test('truncated multipart: 400', async () => {
    const body = multipart(validContact).slice(0, -30);
    expectRefused(await raw(httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', body)), 400);
  });

  test('a wrong boundary: 400', async () => {
    expectRefused(await raw(httpPost('/api/contact', 'multipart/form-data; boundary=Other', multipart(validContact))), 400);
  });

  test('multipart without a boundary: 400', async () => {
    expectRefused(await raw(httpPost('/api/contact', 'multipart/form-data', multipart(validContact))), 400);
  });

  test('10,000 url-encoded parts within the size limit: 400, not a crash', async () => {
    const body = Array.from({ length: 10_000 }, (_, i) => `f${i % 10}=`).join('&');
    expectRefused(await raw(httpPost('/api/contact', 'application/x-www-form-urlencoded', body)), 400);
  });

  test('10,000 multipart parts: refused as too large', async () => {
    const parts = Array.from({ length: 10_000 }, (): [string, string] => ['x', '']);
    expectRefused(await raw(httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart(parts))), 413);
  });

  test('a 100 KB part header: refused as too large', async () => {
    const body = `--XyZ\r\nContent-Disposition: form-data; name="name"\r\nX-Junk: ${'j'.repeat(100 * 1024)}\r\n\r\nAda\r\n--XyZ--\r\n`;
    expectRefused(await raw(httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', body)), 413);
  });

  test('a declared Content-Length of 10 MB: 413 at once, with no body sent', async () => {
    const started = Date.now();
    const answer = await raw(
      `POST /api/contact HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`,
    );
    expectRefused(answer, 413);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  test('a chunked body past the limit: 413', async () => {
    const chunk = `message=${'x'.repeat(70 * 1024)}`;
    const request = `POST /api/contact HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`;
    expectRefused(await raw(request), 413);
  });

  test.each([
    ['JSON', 'application/json', '{"email":"a@b.co"}'],
    ['text/plain', 'text/plain', 'email=a@b.co'],
    ['no content type', null, 'email=a@b.co'],
  ])('%s: 415', async (_, type, body) => {
    expectRefused(await raw(httpPost('/api/newsletter', type, body)), 415);
    expectRefused(await raw(httpPost('/api/contact', type, body)), 415);
  });
});

describe('hostile characters', () => {
  const hostile = [
    ['CR LF', 'Ada\r\nBcc: victim@example.com'],
    ['NUL', 'Ada\u0000Lovelace'],
    ['U+2028', 'Ada\u2028Lovelace'],
    ['a bidi override', 'Ada\u202eecalevoL'],
  ] as const;

  test.each(hostile)('%s in the name: 400 for the name', async (_, value) => {
    const answer = await raw(httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart([['name', value], ...validContact.slice(1)])));
    expectRefused(answer, 400);
    expect(Object.keys(JSON.parse(answer.body).errors)).toEqual(['name']);
  });

  test.each(hostile)('%s in the email: 400 for the email', async (_, value) => {
    // The hostile part in the middle: at either end, trimming would remove white space such as U+2028.
    const email = value.replace('Ada', 'ada').replace(/Lovelace|ecalevoL/, 'x@example.com');
    const contact = await raw(
      httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart([['email', email], ...validContact.filter(([n]) => n !== 'email')])),
    );
    expectRefused(contact, 400);
    expect(Object.keys(JSON.parse(contact.body).errors)).toEqual(['email']);
    expectRefused(await raw(httpPost('/api/newsletter', 'multipart/form-data; boundary=XyZ', multipart([['email', email]]))), 400);
  });

  test.each(hostile.filter(([name]) => name !== 'CR LF' && name !== 'U+2028'))('%s in the message: 400 for the message', async (_, value) => {
    const message = `${value} wrote a long message`;
    const answer = await raw(
      httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart([...validContact.filter(([n]) => n !== 'message'), ['message', message]])),
    );
    expectRefused(answer, 400);
    expect(Object.keys(JSON.parse(answer.body).errors)).toEqual(['message']);
  });

  test('line breaks in the message are kept: a message may have paragraphs', async () => {
    const answer = await raw(
      httpPost(
        '/api/contact',
        'multipart/form-data; boundary=XyZ',
        multipart([...validContact.filter(([n]) => n !== 'message'), ['message', 'First line\r\nSecond\u2028line']]),
      ),
    );
    expect(answer.status).toBe(200);
    expect(storedCount()).toBe(storedBefore + 1);
  });

  test.each(hostile)('%s in the honeypot: 400 for the honeypot', async (_, value) => {
    const answer = await raw(httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart([...validContact.slice(0, 3), ['honeypot', value]])));
    expectRefused(answer, 400);
    expect(Object.keys(JSON.parse(answer.body).errors)).toEqual(['honeypot']);
  });

  test('a 50,000-character email: 400', async () => {
    const email = `${'a'.repeat(50_000)}@example.com`;
    expectRefused(await raw(httpPost('/api/newsletter', 'application/x-www-form-urlencoded', `email=${email}`)), 400);
    const contact = await raw(
      httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart([['email', email], ...validContact.filter(([n]) => n !== 'email')])),
    );
    expectRefused(contact, 400);
  });
});

describe('hostile headers and methods', () => {
  test('a foreign Origin: 403', async () => {
    expectRefused(await raw(httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart(validContact), 'Origin: https://evil.example\r\n')), 403);
    expectRefused(await raw(httpPost('/api/newsletter', 'application/x-www-form-urlencoded', 'email=a%40b.co', 'Origin: https://evil.example\r\n')), 403);
  });

  test.each([
    ['Host', (body: string | Buffer) => String(body).replace(/Host: [^\r]+/, 'Host: evil.example')],
    ['X-Forwarded-Host', (body: string | Buffer) => String(body).replace('\r\n\r\n', '\r\nX-Forwarded-Host: evil.example\r\n\r\n')],
  ])('%s set to another domain is never reflected or followed', async (_, rewrite) => {
    for (const request of [
      httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart(validContact)),
      httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart([])),
      httpPost('/api/newsletter', 'application/x-www-form-urlencoded', 'email=a%40b.co'),
      'GET /api/nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
      'GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    ]) {
      const answer = await raw(rewrite(request));
      expect(`${answer.head}\n${answer.body}`).not.toContain('evil.example');
      expect(answer.status).not.toBe(500);
      expect(answer.head).not.toMatch(/^location:/im);
    }
  });

  test.each([
    ['Host', (body: string | Buffer) => String(body).replace(/Host: [^\r]+/, 'Host: evil.example')],
    ['X-Forwarded-Host', (body: string | Buffer) => String(body).replace('\r\n\r\n', '\r\nX-Forwarded-Host: evil.example\r\n\r\n')],
  ])('%s set to another domain on a form posted without JavaScript: the redirect stays relative, the page never names it', async (_, rewrite) => {
    const navigation = 'Sec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: document\r\nAccept: text/html\r\n';
    // A refusal is 303 too, to the page of its draft (decision 0133), which is fetched with the same headers.
    for (const [request, refused] of [
      [httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart(validContact), navigation), false],
      [httpPost('/api/contact', 'multipart/form-data; boundary=XyZ', multipart([]), navigation), true],
      [httpPost('/api/newsletter', 'application/x-www-form-urlencoded', 'email=a%40b.co', navigation), false],
      [httpPost('/api/newsletter', 'application/x-www-form-urlencoded', 'email=evil.example', navigation), true],
    ] as const) {
      const answer = await raw(rewrite(request));
      expect(answer.status).toBe(303);
      expect(answer.head).not.toContain('evil.example');
      const locations = answer.head.match(/^location:.*$/gim) ?? [];
      expect(locations).toHaveLength(1);
      expect(locations[0]).toMatch(refused ? /^location: \/api\/(contact|newsletter)\?draft=[\w-]{32}$/i : /^location: \/thank-you\/(contact|newsletter)\/$/i);
      if (!refused) continue;
      const location = locations[0]!.slice('location: '.length).trim();
      const page = await raw(rewrite(`GET ${location} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n${navigation}\r\n`));
      expect(page.status).toBe(400);
      expect(page.head).not.toContain('evil.example');
      // The address the visitor typed is shown again, escaped, but nothing from the headers.
      expect(page.body.replaceAll('value="evil.example"', '')).not.toContain('evil.example');
    }
  });

  test.each(['GET', 'PUT', 'DELETE'])('%s on the endpoints: 405 JSON', async (method) => {
    for (const path of ['/api/contact', '/api/newsletter']) {
      expectRefused(await raw(`${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`), 405);
    }
  });
});

describe('a forged X-Forwarded-For without a trusted proxy', () => {
  test('does not change who the client is: the limit still applies to the socket', async () => {
    const limited = await startSite({ RATE_LIMIT_MAX: '2' });
    try {
      const statuses = [];
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${limited.url}/api/newsletter`, {
          method: 'POST',
          body: new URLSearchParams({ email: `forged${i}@example.com` }),
          headers: { 'x-forwarded-for': `198.51.100.${i}` },
        });
        statuses.push(response.status);
      }
      expect(statuses).toEqual([200, 200, 429, 429]);
    } finally {
      await limited.stop();
    }
  });
});
