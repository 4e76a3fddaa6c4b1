/**
 * The validators' time on hostile input up to 64 KiB, measured here rather than asserted
 * in a timed test: fast-check samples the same kinds of input as tests/lib/properties.test.ts.
 */
import fc from 'fast-check';
import * as v from 'valibot';
import { CONTACT_FORM } from '../packages/site-forms/src/lib/forms/contact.ts';
import { parseForm } from '../packages/site-forms/src/lib/forms/definition.ts';
import { NewsletterSchema } from '../packages/site-forms/src/lib/forms/newsletter.ts';
import { anyText, fastestMs } from '../tests/support/hostile-text.ts';

/** Median and worst time of each validator over `runs` sampled inputs. */
export function measureValidators(runs = 300): Array<{ validator: string; medianMs: number; maxMs: number }> {
  const samples = fc.sample(fc.tuple(anyText, anyText, anyText), { numRuns: runs, seed: 42 });
  const stats = (times: number[]) => {
    const sorted = [...times].sort((a, b) => a - b);
    return { medianMs: sorted[Math.floor(sorted.length / 2)]!, maxMs: sorted.at(-1)! };
  };
  return [
    {
      validator: 'contact',
      ...stats(samples.map(([name, email, message]) => fastestMs(() => parseForm(CONTACT_FORM, { name, email, message, honeypot: '' })))),
    },
    { validator: 'newsletter', ...stats(samples.map(([email]) => fastestMs(() => v.safeParse(NewsletterSchema, { email })))) },
  ];
}
