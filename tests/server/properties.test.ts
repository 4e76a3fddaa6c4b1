import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Site, startSite } from '../support/site.ts';

let site: Site;
beforeAll(async () => {
  site = await startSite();
});
afterAll(() => site.stop());

const token = fc.string({ minLength: 1, maxLength: 20, unit: fc.constantFrom(...'abcXYZ-_09'.split('')) });
const part = fc.record({
  name: fc.oneof(fc.constantFrom('name', 'email', 'message', 'honeypot'), fc.string({ maxLength: 20 })),
  value: fc.oneof(fc.string({ maxLength: 200 }), fc.string({ maxLength: 200, unit: 'binary' })),
  filename: fc.option(fc.string({ maxLength: 20 })),
  extraHeader: fc.option(fc.string({ maxLength: 50 })),
});

/** A multipart body that is sometimes right and often subtly broken. */
const multipartBody = fc
  .record({
    boundary: token,
    declaredBoundary: fc.option(token, { nil: undefined }),
    parts: fc.array(part, { maxLength: 8 }),
    close: fc.boolean(),
    junk: fc.option(fc.string({ maxLength: 50, unit: 'binary' }), { nil: undefined }),
  })
  .map(({ boundary, declaredBoundary, parts, close, junk }) => {
    let body = parts
      .map(
        (p) =>
          `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename === null ? '' : `; filename="${p.filename}"`}\r\n${p.extraHeader === null ? '' : `${p.extraHeader}\r\n`}\r\n${p.value}\r\n`,
      )
      .join('');
    if (close) body += `--${boundary}--\r\n`;
    if (junk) body += junk;
    return { contentType: `multipart/form-data; boundary=${declaredBoundary ?? boundary}`, body };
  });

describe('random multipart bodies over HTTP', () => {
  test.each(['/api/contact', '/api/newsletter'])('%s never answers 500 or anything but JSON with success', async (path) => {
    await fc.assert(
      fc.asyncProperty(multipartBody, async ({ contentType, body }) => {
        const response = await fetch(`${site.url}${path}`, { method: 'POST', body, headers: { 'content-type': contentType } });
        expect(response.status).toBeLessThan(500);
        expect(response.headers.get('content-type')).toMatch(/^application\/json/);
        const json = (await response.json()) as { success: unknown };
        expect(typeof json.success).toBe('boolean');
      }),
      { numRuns: 150 },
    );
  });
});
