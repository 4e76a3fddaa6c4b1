import * as v from 'valibot';

/** The environment as the readers see it: variable names to raw strings. */
export type Env = Readonly<Record<string, string | undefined>>;

/** What a reader found: its part of the configuration, and every problem, each starting with its variable's name. */
export type Reading<T> = { config: T; problems: string[] };

/**
 * One concern of the configuration (server, newsletter, SMTP…): how to read its variables and
 * how to describe its part for the start-up log.
 * Hint: `describe` must mask every secret; it is what reaches the log.
 */
export type ConfigConcern<T extends object> = {
  read(env: Env): Reading<T>;
  describe(config: T): Record<string, unknown>;
};

/** The schema of one variable: a string (or nothing) in, its typed value out. */
type Variable = v.GenericSchema<string | undefined, unknown>;

/** A trimmed string. */
export const text = v.pipe(v.string(), v.trim());

/** A string that may be left empty; empty counts as not set. */
export const optionalText = v.optional(
  v.pipe(
    text,
    v.transform((s) => (s === '' ? undefined : s)),
  ),
);

/** Whether `value` is an absolute URL of one of `schemes` (named without the colon, in lower case as URL gives them). */
export function hasScheme(value: string, schemes: readonly string[]): boolean {
  return URL.canParse(value) && schemes.includes(new URL(value).protocol.slice(0, -1));
}

/** An http(s) address without its trailing slashes, or '' when not set. */
export const optionalUrl = v.optional(
  v.pipe(
    text,
    v.check((s) => s === '' || hasScheme(s, ['http', 'https']), 'must be an absolute http(s) URL'),
    v.transform((s) => s.replace(/\/+$/, '')),
  ),
);

/** A whole number from `min` to `max`, written in decimal digits. */
export const integer = (min: number, max: number) =>
  v.pipe(
    text,
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

/** A URL of one of `schemes` (such as `['smtp', 'smtps']`), or '' when not set; `example` goes into the message. */
export const optionalUrlOf = (schemes: readonly string[], example: string) =>
  v.optional(
    v.pipe(
      text,
      v.check((s) => s === '' || URL.canParse(s), `must be a URL such as ${example}`),
      v.check((s) => s === '' || hasScheme(s, schemes), `must start with ${schemes.map((scheme) => `${scheme}://`).join(' or ')}`),
    ),
  );

/**
 * Reads each variable of `schemas` on its own: a malformed one is a problem naming it and then
 * takes its default, so that every problem is listed in one go rather than one per restart.
 * Hint: no message ever carries the value, which may be a secret (a password in a URL):
 * every check has its own message, and any check without one says only "is not valid".
 */
export function readVariables<const Schemas extends Record<string, Variable>>(
  schemas: Schemas,
  env: Env,
): Reading<{ [Name in keyof Schemas]: v.InferOutput<Schemas[Name]> }> {
  const config: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, schema] of Object.entries(schemas)) {
    const parsed = v.safeParse(schema, env[name], { message: NOT_VALID });
    if (parsed.success) {
      config[name] = parsed.output;
    } else {
      problems.push(`${name} ${parsed.issues[0].message}`);
      config[name] = v.parse(schema, undefined);
    }
  }
  return { config: config as { [Name in keyof Schemas]: v.InferOutput<Schemas[Name]> }, problems };
}

/** The message of a check that has none of its own: valibot's default would quote the value. */
const NOT_VALID = 'is not valid';
