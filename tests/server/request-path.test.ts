import { connect } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Site, startSite } from '../support/site.ts';

/**
 * The one road of a request (decision 0040) over raw HTTP to the built server: path
 * variants, methods, timeouts, limits and the answers' exact bytes (issue 11 items 10, 11,
 * 12, 15, 16). Raw sockets, because fetch would tidy the paths before they are sent.
 */
let site: Site;
let port: number;

beforeAll(async () => {
  // Two accepted posts per client and route; the client is the proxy's X-Forwarded-For.
  site = await startSite({ RATE_LIMIT_MAX: '2', TRUST_PROXY: '1', LOG_CLIENT_LINES: 'all' });
  port = Number(new URL(site.url).port);
});
afterAll(() => site.stop());

type RawAnswer = { status: number; head: string; body: string };

/** Sends raw bytes and reads the whole answer, the connection closing after it. */
function raw(request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('end', () => {
      const [head = '', ...rest] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), head, body: rest.join('\r\n\r\n') });
    });
    socket.on('error', reject);
    setTimeout(() => reject(new Error(`no answer: ${text}`)), 10_000);
  });
}

function header(answer: RawAnswer, name: string): string | undefined {
  return new RegExp(`^${name}: *(.*)$`, 'im').exec(answer.head)?.[1]?.trim();
}

const CONTACT = 'name=Ada+Lovelace&email=ada%40example.com&message=Hello%2C+I+would+like+to+know+more.&honeypot=';
const INVALID = 'name=A&email=ada%40example.com&message=short&honeypot=';

/** A form post as a script or curl sends it, from the client named by X-Forwarded-For. */
function post(path: string, body: string, client: string, extra = ''): Promise<RawAnswer> {
  return raw(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\nX-Forwarded-For: ${client}\r\n` +
      `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`,
  );
}

function storedCount(): number {
  const db = new DatabaseSync(join(site.dataDir, 'forms.db'), { readOnly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM submissions').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function logLines(event: string): Array<Record<string, unknown>> {
  return site.logs.filter((line): line is Record<string, unknown> => typeof line === 'object' && line.event === event);
}

describe('path variants of the endpoints are a JSON 404, stored nowhere, and logged (issue 11 item 10)', () => {
  test.each([
    ['//api/contact'],
    ['/api//contact'],
    ['/%61pi/contact'],
    ['/api/%63ontact'],
    ['/%2561pi/contact'],
    ['/api/contact/'],
    ['/api/contact/.'],
    ['/api/x/../contact'],
    ['/./api/contact'],
    ['/API/contact'],
    ['/api/contact;x'],
    ['/api\\contact'],
    ['http://127.0.0.1//api/contact'],
    ['/api/newsletter/'],
    ['/api/nothing'],
  ])('POST %s', async (path) => {
    const before = storedCount();
    const answer = await post(path, CONTACT, '198.51.100.1');
    expect([answer.status, answer.body]).toEqual([404, '{"success":false,"error":"Not found"}']);
    expect([header(answer, 'content-type'), header(answer, 'cache-control')]).toEqual(['application/json; charset=utf-8', 'no-store']);
    expect(storedCount()).toBe(before);
    expect(logLines('request.near_miss').at(-1)).toMatchObject({ level: 'warn', method: 'POST', path: path.replace(/^http:\/\/[^/]+/, '') });
  });

  test('ten posts to //api/contact store nothing, and do not count against the real endpoint’s limit', async () => {
    const before = storedCount();
    const statuses = [];
    for (let i = 0; i < 10; i++) statuses.push((await post('//api/contact', CONTACT, '198.51.100.2')).status);
    expect(statuses).toEqual(Array(10).fill(404));
    expect(storedCount()).toBe(before);
    const real = [];
    for (let i = 0; i < 3; i++) real.push((await post('/api/contact', CONTACT, '198.51.100.2')).status);
    expect(real).toEqual([200, 200, 429]);
  });
});

describe('TRACE and other methods no page takes: JSON 405, never a stack (issue 11 item 11)', () => {
  test.each([
    ['TRACE', '/', 'GET, HEAD'],
    ['TRACE', '/contact', 'GET, HEAD'],
    ['TRACE', '/not-held-in-memory', 'GET, HEAD'],
    ['TRACE', '/_astro/missing.js', 'GET, HEAD'],
    ['TRACE', '/api/contact', 'POST'],
    ['TRACE', '//api/contact', 'GET, HEAD'],
    ['PROPFIND', '/', 'GET, HEAD'],
    ['MKCOL', '/api/health', 'GET'],
    // A page answered a post with itself and a 200, as if something had been done.
    ['POST', '/', 'GET, HEAD'],
    ['POST', '/contact/', 'GET, HEAD'],
    ['POST', '/thank-you/', 'GET, HEAD'],
    ['PATCH', '/contact/', 'GET, HEAD'],
    ['PUT', '/not-a-page', 'GET, HEAD'],
    ['DELETE', '/', 'GET, HEAD'],
    ['OPTIONS', '/', 'GET, HEAD'],
  ])('%s %s: 405 naming %s', async (method, path, allow) => {
    const answer = await raw(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    expect([answer.status, header(answer, 'allow'), header(answer, 'cache-control')]).toEqual([405, allow, 'no-store']);
    expect(answer.body).toBe(`{"success":false,"error":"Use ${allow.replace(', ', ' or ')} for this address"}`);
  });

  test('nothing the server printed holds a stack trace', () => {
    expect(JSON.stringify(site.logs)).not.toMatch(/\bat .*\(.*:\d+:\d+\)|Error: /);
  });
});

describe('the endpoints’ own answers, byte for byte', () => {
  test('405 for a GET of a form endpoint names POST, in Allow and in the error', async () => {
    const answer = await raw(`GET /api/contact HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    expect([answer.status, header(answer, 'allow'), header(answer, 'cache-control'), answer.body]).toEqual([
      405,
      'POST',
      'no-store',
      '{"success":false,"error":"Use POST for this address"}',
    ]);
  });

  test('HEAD of health, as uptime checks send it: 200 with the length of the JSON and no body', async () => {
    const answer = await raw(`HEAD /api/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    expect([answer.status, header(answer, 'content-type'), answer.body]).toEqual([200, 'application/json; charset=utf-8', '']);
    expect(Number(header(answer, 'content-length'))).toBeGreaterThan(40);
  });

  test('200 and 400 are never stored by a cache', async () => {
    const ok = await post('/api/contact', CONTACT, '198.51.100.3');
    const refused = await post('/api/contact', INVALID, '198.51.100.3');
    expect([ok.status, header(ok, 'cache-control'), ok.body]).toEqual([200, 'no-store', '{"success":true}']);
    expect([refused.status, header(refused, 'cache-control')]).toEqual([400, 'no-store']);
  });

  // The padding field is not one of the form's: the message is valid whatever its size.
  const padded = (bytes: number) => `${CONTACT}&padding=${'x'.repeat(bytes - CONTACT.length - '&padding='.length)}`;
  const TOO_LARGE = '{"success":false,"error":"The form is too large; the limit is 64 KB"}';

  test.each([
    ['declared in Content-Length', ''],
    ['sent in chunks without a length', 'chunked'],
  ])('a body of exactly 64 KiB is read and stored; one byte more is 413 (%s)', async (_, mode) => {
    const send = (body: string, client: string) => {
      if (!mode) return post('/api/contact', body, client);
      const chunks = `${(body.length - 1000).toString(16)}\r\n${body.slice(0, -1000)}\r\n${(1000).toString(16)}\r\n${body.slice(-1000)}\r\n0\r\n\r\n`;
      return raw(
        `POST /api/contact HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\nX-Forwarded-For: ${client}\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}`,
      );
    };
    const before = storedCount();
    const exact = await send(padded(65_536), `198.51.100.${mode ? 5 : 4}`);
    expect([exact.status, exact.body]).toEqual([200, '{"success":true}']);
    expect(storedCount()).toBe(before + 1);
    const over = await send(padded(65_537), `198.51.100.${mode ? 5 : 4}`);
    expect([over.status, header(over, 'cache-control'), over.body]).toEqual([413, 'no-store', TOO_LARGE]);
    expect(storedCount()).toBe(before + 1);
  });
});

describe('only accepted posts count toward the limit; a looser one bounds every post (issue 11 item 15)', () => {
  test('three mistakes, then two messages, are all answered; the limit then applies to anything', async () => {
    const statuses = [];
    for (const body of [INVALID, INVALID, INVALID, CONTACT, CONTACT, CONTACT, INVALID])
      statuses.push((await post('/api/contact', body, '203.0.113.50')).status);
    expect(statuses).toEqual([400, 400, 400, 200, 200, 429, 429]);
  });

  test('a client that posts nothing valid is stopped after 4 × RATE_LIMIT_MAX posts, with Retry-After', async () => {
    const statuses = [];
    for (let i = 0; i < 9; i++) statuses.push((await post('/api/newsletter', 'email=nope', '203.0.113.51')).status);
    expect(statuses).toEqual([400, 400, 400, 400, 400, 400, 400, 400, 429]);
    const limited = await post('/api/newsletter', 'email=reader%40example.com', '203.0.113.51');
    expect(limited.status).toBe(429);
    expect(Number(header(limited, 'retry-after'))).toBeGreaterThan(500);
    expect(limited.body).toBe('{"success":false,"error":"Too many attempts. Please try again in 10 minutes."}');
  });

  test('each post is one log line with its own outcome', () => {
    const words = logLines('form.request')
      .filter((line) => line.route === '/api/contact')
      .slice(-7)
      .map((line) => line.outcome);
    expect(words).toEqual(['invalid', 'invalid', 'invalid', 'accepted', 'accepted', 'rate-limited', 'rate-limited']);
  });
});

describe('what a person sees at the edges of the site (issue 11 item 16)', () => {
  test('/favicon.ico is an icon', async () => {
    const response = await fetch(`${site.url}/favicon.ico`);
    expect([response.status, response.headers.get('content-type')]).toEqual([200, 'image/x-icon']);
    // An ICO file starts with reserved 0, then type 1 (icon).
    expect([...new Uint8Array(await response.arrayBuffer()).slice(0, 4)]).toEqual([0, 0, 1, 0]);
  });

  test('/404.html answers 404 with the site’s page', async () => {
    const response = await fetch(`${site.url}/404.html`);
    expect(response.status).toBe(404);
    await expect(response.text()).resolves.toContain('<h1>Page not found</h1>');
  });

  test('a form too large for a person without JavaScript: a 413 page in the site’s layout, not JSON', async () => {
    const body = `${CONTACT}&padding=${'x'.repeat(70_000)}`;
    const navigation = 'Sec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: document\r\n';
    const posted = await post('/api/contact', body, '203.0.113.52', navigation);
    // 303 to the page of its draft (decision 0133), which the same client then loads.
    expect(posted.status).toBe(303);
    expect(header(posted, 'location')).toMatch(/^\/api\/contact\?draft=[\w-]{32}$/);
    const answer = await raw(
      `GET ${header(posted, 'location')} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\nX-Forwarded-For: 203.0.113.52\r\n${navigation}\r\n`,
    );
    expect([answer.status, header(answer, 'content-type')]).toEqual([413, 'text/html']);
    expect(answer.body).toContain('<title>Error: Contact us ');
    expect(answer.body).toContain('The form is too large; the limit is 64 KB');
  });
});

describe('timeouts as documented: 10 s for the headers, 30 s for the whole request (issue 11 item 12)', () => {
  /** Opens a connection, sends what is given, and measures how long until the server closes it. */
  function secondsUntilClosed(partial: string): Promise<{ seconds: number; answer: string }> {
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const socket = connect(port, '127.0.0.1', () => socket.write(partial));
      let answer = '';
      socket.setEncoding('latin1').on('data', (chunk: string) => {
        answer += chunk;
      });
      socket.on('close', () => resolve({ seconds: (performance.now() - started) / 1000, answer }));
      socket.on('error', reject);
    });
  }

  test.concurrent('headers that never finish: 408 and the connection closed after 10 s, not 20', async () => {
    const { seconds, answer } = await secondsUntilClosed(`POST /api/contact HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: 1\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(seconds).toBeGreaterThanOrEqual(9.5);
    expect(seconds).toBeLessThan(15);
  }, 60_000);

  test.concurrent('a body that never finishes: the connection closed after 30 s, not 60', async () => {
    const head = `POST /api/contact HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Forwarded-For: 203.0.113.60\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 500\r\n\r\n`;
    const { seconds } = await secondsUntilClosed(`${head}name=Ada`);
    expect(seconds).toBeGreaterThanOrEqual(29.5);
    expect(seconds).toBeLessThan(40);
  }, 90_000);
});
