import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { parseForm } from '../../src/lib/forms/definition.ts';
import { contactForm } from '../../src/lib/forms/registry.ts';
import { EmailField } from '../../src/lib/forms/email.ts';
import { NewsletterSchema } from '../../src/lib/forms/newsletter.ts';
import { anyText, fastestMs } from '../support/hostile-text.ts';

/**
 * The bound a timed test can hold on a shared, noisy machine. The 5 ms budget of the
 * issue is measured where timing belongs, in `npm run bench` (docs/performance.md); here
 * the bound only has to catch what matters: a pattern that backtracks takes seconds on
 * 64 KiB, not milliseconds.
 */
const NEVER_SLOWER_THAN_MS = 50;

const word = (chars: string, max: number) => fc.string({ minLength: 1, maxLength: max, unit: fc.constantFrom(...chars.split('')) });
/** Addresses as people have them: the property below needs many that are accepted. */
const plainEmail = fc
  .tuple(
    word('abcdefghijklmnopqrstuvwxyz0123456789', 20),
    fc.option(word('abcxyz0189_+-', 8), { nil: undefined }),
    word('abcdefghij0123', 15),
    word('comnetorgiouk', 6),
  )
  .map(([local, tag, domain, tld]) => `${local}${tag ? `.${tag}` : ''}@${domain}.${tld.length < 2 ? `${tld}x` : tld}`);

describe('validators under any input', () => {
  test('the contact validator never throws and stays linear for inputs up to 64 KiB', () => {
    fc.assert(
      fc.property(anyText, anyText, anyText, anyText, (name, email, message, honeypot) => {
        const ms = fastestMs(() => parseForm(contactForm, { name, email, message, honeypot }));
        expect(ms).toBeLessThan(NEVER_SLOWER_THAN_MS);
      }),
      { numRuns: 150 },
    );
  });

  test('the newsletter validator never throws and stays linear for inputs up to 64 KiB', () => {
    fc.assert(
      fc.property(anyText, (email) => {
        const ms = fastestMs(() => v.safeParse(NewsletterSchema, { email }));
        expect(ms).toBeLessThan(NEVER_SLOWER_THAN_MS);
      }),
      { numRuns: 300 },
    );
  });

  test('an accepted email never holds CR, LF, NUL, a comma, a quote or angle brackets', () => {
    const emailish = fc.oneof(
      plainEmail,
      fc.emailAddress(),
      fc
        .tuple(plainEmail, fc.constantFrom('\r', '\n', '\u0000', ',', '"', '<', '>'), fc.nat({ max: 30 }))
        .map(([email, bad, at]) => email.slice(0, at % email.length) + bad + email.slice(at % email.length)),
      anyText,
    );
    fc.assert(
      fc.property(emailish, (email) => {
        const result = v.safeParse(EmailField, email);
        if (result.success) expect(result.output).not.toMatch(/[\r\n\u0000,"<>]/);
      }),
      { numRuns: 2000 },
    );
  });

  test('fast-check finds accepted emails at all (the property above is not vacuous)', () => {
    let accepted = 0;
    fc.assert(
      fc.property(plainEmail, (email) => {
        if (v.safeParse(EmailField, email).success) accepted++;
      }),
      { numRuns: 200 },
    );
    expect(accepted).toBeGreaterThan(100);
  });
});
