import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, test } from 'vitest';
import { parseForm } from '../../packages/site-forms/src/lib/forms/definition.ts';
import { contactForm } from '../../packages/site-forms/src/lib/forms/registry.ts';
import { EmailField } from '../../packages/site-forms/src/lib/forms/email.ts';
import { NewsletterSchema } from '../../packages/site-forms/src/lib/forms/newsletter.ts';
import { anyText, fastestMs } from '../support/hostile-text.ts';

/**
 * A guard against catastrophic backtracking, not a speed test (decision 0215): a bounded input
 * (at most the 64 KiB body limit) and a bound 200 times what a linear validator takes on it
 * (under 5 ms, docs/performance.md). A pattern that backtracks is caught all the same: on 64 KiB
 * a quadratic one makes about 2 × 10⁹ steps (seconds), an exponential one never ends. Steps
 * cannot be counted inside V8's regular expressions, so time it is; only a generous bound keeps
 * it about the pattern rather than about how busy the machine is.
 */
const CATASTROPHIC_MS = 1_000;

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
  test('the contact validator never throws nor backtracks catastrophically on inputs up to 64 KiB', () => {
    fc.assert(
      fc.property(anyText, anyText, anyText, anyText, (name, email, message, honeypot) => {
        const ms = fastestMs(() => parseForm(contactForm, { name, email, message, honeypot }));
        expect(ms).toBeLessThan(CATASTROPHIC_MS);
      }),
      { numRuns: 150 },
    );
  });

  test('the newsletter validator never throws nor backtracks catastrophically on inputs up to 64 KiB', () => {
    fc.assert(
      fc.property(anyText, (email) => {
        const ms = fastestMs(() => v.safeParse(NewsletterSchema, { email }));
        expect(ms).toBeLessThan(CATASTROPHIC_MS);
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
