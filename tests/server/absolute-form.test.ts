import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Site, startSite } from '../support/site.ts';

/**
 * A request-target in absolute form (`POST http://host/path HTTP/1.1`) names its own host,
 * which counts before `Host` (RFC 9112 3.2.2): with PUBLIC_URL set, both must name the site;
 * and a request with two Host lines is refused (RFC 9112 3.2).
 */
let site: Site;
beforeAll(async () => {
  site = await startSite({ PUBLIC_URL: 'http://www.example.test' });
});
afterAll(() => site.stop());

const CONTACT = 'name=Bob+Smith&email=bob%40example.com&message=Hello+there%2C+a+question.';

/** Sends one raw request and answers its status and body. */
function send(target: string, host: string | string[], method = 'POST'): Promise<{ status: number; body: string }> {
  const port = Number(new URL(site.url).port);
  const body = method === 'POST' ? CONTACT : '';
  const hosts = [host]
    .flat()
    .map((name) => `Host: ${name}\r\n`)
    .join('');
  const request = `${method} ${target} HTTP/1.1\r\n${hosts}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve({ status: Number(text.split(' ')[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) }));
    socket.on('error', reject);
  });
}

const MISDIRECTED_JSON = { status: 421, body: '{"success":false,"error":"This site does not answer to that address"}' };

describe('a request-target in absolute form, with PUBLIC_URL set', () => {
  test.each([
    ['to another site with our Host', 'http://evil.test/api/contact', 'www.example.test', MISDIRECTED_JSON],
    ['to another site with its Host', 'http://evil.test/api/contact', 'evil.test', MISDIRECTED_JSON],
    ['to our site with another Host', 'http://www.example.test/api/contact', 'evil.test', MISDIRECTED_JSON],
    ['to our site with our Host', 'http://www.example.test/api/contact', 'www.example.test', { status: 200, body: '{"success":true}' }],
  ])('a post %s: %j', async (_, target, host, expected) => {
    await expect(send(target, host)).resolves.toEqual(expected);
  });

  test('a page of another site in absolute form: 421 as text', async () => {
    await expect(send('http://evil.test/contact/', 'www.example.test', 'GET')).resolves.toEqual({
      status: 421,
      body: 'This site does not answer to that address.\n',
    });
  });
});

describe('two Host lines (Node reads the first, a proxy may read the last)', () => {
  test.each([
    ['ours, then another', ['www.example.test', 'evil.test']],
    ['another, then ours', ['evil.test', 'www.example.test']],
    ['ours twice', ['www.example.test', 'www.example.test']],
  ])('%s: 400', async (_, hosts) => {
    await expect(send('/api/contact', hosts)).resolves.toEqual({ status: 400, body: '{"success":false,"error":"Bad request: more than one Host header"}' });
  });

  test('on a page: 400 as text', async () => {
    await expect(send('/contact/', ['www.example.test', 'evil.test'], 'GET')).resolves.toEqual({
      status: 400,
      body: 'Bad request: more than one Host header.\n',
    });
  });
});
