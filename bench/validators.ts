/**
 * The validators' time on hostile input up to 64 KiB, measured here rather than asserted
 * in a timed test: fast-check samples the same kinds of input as tests/lib/properties.test.ts.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { parseContact } from '../src/lib/forms/contact.ts';
import { NewsletterSchema } from '../src/lib/forms/newsletter.ts';

const MAX_INPUT = 64 * 1024;
const anyText = fc.oneof(
  fc.string({ maxLength: MAX_INPUT, unit: 'grapheme' }),
  fc.string({ maxLength: 2000, unit: fc.constantFrom('a', '@', '.', '-', '+', ' ', '\r', '\n', '\u0000', '"', ',', '<', '>', '\u202e') }),
  fc.nat({ max: MAX_INPUT / 2 }).map((n) => `${'a.'.repeat(n / 2)}@`),
  fc.nat({ max: MAX_INPUT / 2 }).map((n) => `a@${'a-'.repeat(n / 2)}!`),
  fc.nat({ max: MAX_INPUT }).map((n) => 'a'.repeat(n)),
);

function fastestMs(run: () => void): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    run();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

/** Median and worst time of each validator over `runs` sampled inputs. */
export function measureValidators(runs = 300): Array<{ validator: string; medianMs: number; maxMs: number }> {
  const samples = fc.sample(fc.tuple(anyText, anyText, anyText), { numRuns: runs, seed: 42 });
  const stats = (times: number[]) => {
    const sorted = [...times].sort((a, b) => a - b);
    return { medianMs: sorted[Math.floor(sorted.length / 2)]!, maxMs: sorted.at(-1)! };
  };
  return [
    { validator: 'contact', ...stats(samples.map(([name, email, message]) => fastestMs(() => parseContact({ name, email, message, honeypot: '' })))) },
    { validator: 'newsletter', ...stats(samples.map(([email]) => fastestMs(() => v.safeParse(NewsletterSchema, { email })))) },
  ];
}
