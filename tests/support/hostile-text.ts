import fc from 'fast-check';

/** The largest input a validator can meet: the body limit. */
export const MAX_INPUT = 64 * 1024;

/**
 * Text of any size up to the body limit, biased towards what breaks validators; shared by
 * the property tests and the validators' benchmark (bench/validators.ts).
 */
export const anyText = fc.oneof(
  fc.string({ maxLength: 300, unit: 'binary' }),
  fc.string({ maxLength: MAX_INPUT, unit: 'grapheme' }),
  fc.string({ maxLength: 2000, unit: fc.constantFrom('a', '@', '.', '-', '+', '_', ' ', '\r', '\n', '\u0000', '"', ',', '<', '>', '\u202e') }),
  // Long runs of what a backtracking email pattern would choke on.
  fc.nat({ max: MAX_INPUT / 2 }).map((n) => `${'a.'.repeat(n / 2)}@`),
  fc.nat({ max: MAX_INPUT / 2 }).map((n) => `a@${'a-'.repeat(n / 2)}!`),
  fc.nat({ max: MAX_INPUT }).map((n) => 'a'.repeat(n)),
);

/** The fastest of three runs, so a garbage-collection pause is not taken for slowness. */
export function fastestMs(run: () => void): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const started = performance.now();
    run();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}
