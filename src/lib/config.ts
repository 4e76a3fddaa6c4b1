import { existsSync } from 'node:fs';
import * as v from 'valibot';

/** The newsletter providers a deployment can choose from (SPEC.md 2.4, plus the embedded default). */
export const PROVIDER_NAMES = ['mailchimp', 'kit', 'resend', 'local'] as const;

/** One of the newsletter providers. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

const text = v.pipe(v.string(), v.trim());
const optionalText = v.optional(
  v.pipe(
    text,
    v.transform((s) => (s === '' ? undefined : s)),
  ),
);
const httpUrl = v.pipe(
  text,
  v.url('must be an absolute URL'),
  v.check((s) => /^https?:\/\//i.test(s), 'must start with http:// or https://'),
  v.transform((s) => s.replace(/\/+$/, '')),
);
const optionalUrl = v.optional(v.union([v.literal(''), httpUrl], 'must be an absolute http(s) URL'));
const integer = (min: number, max: number) =>
  v.pipe(
    text,
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );
const emailAddress = v.pipe(text, v.email('must be an email address'));
const DataDirField = v.optional(text, './data');

/**
 * The environment variables the server reads, as strings; every one is optional so
 * that `npm start` works with no configuration at all.
 */
const EnvSchema = v.object({
  HOST: v.optional(text, 'localhost'),
  PORT: v.optional(integer(0, 65535), '4321'),
  DATA_DIR: DataDirField,
  ALLOWED_ORIGINS: v.optional(text, ''),
  NEWSLETTER_PROVIDER: v.optional(
    v.pipe(text, v.toLowerCase(), v.union([v.literal(''), v.picklist(PROVIDER_NAMES)], `must be one of ${PROVIDER_NAMES.join(', ')}`)),
  ),
  MAILCHIMP_API_KEY: optionalText,
  MAILCHIMP_LIST_ID: optionalText,
  MAILCHIMP_SERVER_PREFIX: optionalText,
  MAILCHIMP_API_BASE_URL: optionalUrl,
  KIT_API_KEY: optionalText,
  // Kit's API wants the form's number; the embed code's data-uid looks similar but is not it.
  KIT_FORM_ID: v.optional(
    v.union(
      [v.literal(''), v.pipe(text, v.regex(/^\d+$/))],
      "must be the form's number, such as 1234567 (from the form's address in Kit, not the data-uid of its embed code)",
    ),
  ),
  KIT_API_BASE_URL: optionalUrl,
  RESEND_API_KEY: optionalText,
  RESEND_AUDIENCE_ID: optionalText,
  RESEND_BASE_URL: optionalUrl,
  SMTP_URL: v.optional(
    v.union(
      [
        v.literal(''),
        v.pipe(
          text,
          v.url(),
          v.check((s) => /^smtps?:\/\//i.test(s), 'must start with smtp:// or smtps://'),
        ),
      ],
      'must be a URL such as smtp://user:pass@smtp.example.com:587',
    ),
  ),
  CONTACT_TO: v.optional(v.union([v.literal(''), emailAddress], 'must be an email address')),
  CONTACT_FROM: v.optional(v.union([v.literal(''), emailAddress], 'must be an email address')),
  DELIVERY_RETRY_BASE_MS: v.optional(integer(1, 3_600_000), '30000'),
  RATE_LIMIT_MAX: v.optional(integer(0, 1_000_000), '5'),
  RATE_LIMIT_WINDOW_SECONDS: v.optional(integer(1, 31 * 24 * 3600), '600'),
  TRUST_PROXY: v.optional(integer(0, 20), '0'),
  PUBLIC_URL: optionalUrl,
  REDIS_URL: v.optional(
    v.union(
      [
        v.literal(''),
        v.pipe(
          text,
          v.url(),
          v.check((s) => /^rediss?:\/\//i.test(s), 'must start with redis://'),
        ),
      ],
      'must be a URL such as redis://127.0.0.1:6379',
    ),
  ),
  LOG_LEVEL: v.optional(v.picklist(['debug', 'info', 'warn', 'error', 'silent'], 'must be debug, info, warn, error or silent'), 'info'),
  API_FAST_PATH: v.optional(v.picklist(['on', 'off'], 'must be on or off'), 'on'),
});

/** The Mailchimp settings, complete (SPEC.md 2.4 row 1). */
export type MailchimpConfig = { apiKey: string; listId: string; baseUrl: string };
/** The Kit settings, complete (SPEC.md 2.4 row 2). */
export type KitConfig = { apiKey: string; formId: string; baseUrl: string };
/** The Resend settings, complete (SPEC.md 2.4 row 3). */
export type ResendConfig = { apiKey: string; audienceId: string; baseUrl: string };

/** The chosen newsletter provider with exactly the settings it needs. */
export type NewsletterConfig =
  | { provider: 'mailchimp'; mailchimp: MailchimpConfig }
  | { provider: 'kit'; kit: KitConfig }
  | { provider: 'resend'; resend: ResendConfig }
  | { provider: 'local' };

/** SMTP delivery of contact messages, or `undefined` when messages are only stored. */
export type SmtpConfig = { url: string; to: string; from: string };

/** The whole configuration of the server, read once at start-up. */
export type Config = {
  host: string;
  port: number;
  dataDir: string;
  allowedOrigins: string[];
  newsletter: NewsletterConfig;
  /** Why the provider was chosen, for the start-up log. */
  newsletterChoice: 'configured' | 'inferred' | 'default';
  smtp: SmtpConfig | undefined;
  /** The wait after the first failed delivery attempt; it doubles up to an hour. */
  delivery: { retryBaseMs: number };
  rateLimit: { max: number; windowSeconds: number };
  /** How many reverse proxies sit in front; their `X-Forwarded-*` headers are believed. */
  trustProxy: number;
  /** The site's public origin (`PUBLIC_URL`), which alone is "same origin" when set. */
  publicUrl: string | undefined;
  redisUrl: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Whether our server answers `/api/*` itself rather than through Astro (decision 0005). */
  apiFastPath: boolean;
};

/** The answer of `readConfig`: the configuration, or every problem found. */
export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** Which variable holds the key of each paid provider: setting it is how a provider is inferred. */
const PROVIDER_KEYS = {
  mailchimp: 'MAILCHIMP_API_KEY',
  kit: 'KIT_API_KEY',
  resend: 'RESEND_API_KEY',
} as const;

/** Which variable names the list, form or audience of each paid provider. */
const PROVIDER_TARGETS = {
  mailchimp: 'MAILCHIMP_LIST_ID',
  kit: 'KIT_FORM_ID',
  resend: 'RESEND_AUDIENCE_ID',
} as const;

/**
 * Reads and checks the configuration from an environment, collecting every problem.
 * Hint: problems name the variable, never its value, because values may be secrets.
 */
export function readConfig(env: Record<string, string | undefined>): ConfigResult {
  const problems: string[] = [];
  let parsed = v.safeParse(EnvSchema, env);
  if (!parsed.success) {
    // Name the malformed variables, then check the rest without them so that every
    // problem is listed in one go rather than one per restart.
    const nested = v.flatten<typeof EnvSchema>(parsed.issues).nested ?? {};
    const rest = { ...env };
    for (const [name, messages] of Object.entries(nested)) {
      problems.push(`${name} ${messages?.[0] ?? 'is invalid'}`);
      delete rest[name];
    }
    parsed = v.safeParse(EnvSchema, rest);
    if (!parsed.success) return { ok: false, problems };
  }
  const e = parsed.output;
  const missing = (name: string, value: string | undefined, because: string): string => {
    if (value === undefined) problems.push(`${name} is required ${because}`);
    return value ?? '';
  };

  const keysSet = (Object.keys(PROVIDER_KEYS) as (keyof typeof PROVIDER_KEYS)[]).filter((p) => e[PROVIDER_KEYS[p]] !== undefined);
  let provider: ProviderName;
  let newsletterChoice: Config['newsletterChoice'];
  if (e.NEWSLETTER_PROVIDER) {
    provider = e.NEWSLETTER_PROVIDER;
    newsletterChoice = 'configured';
  } else if (keysSet.length > 1) {
    problems.push(
      `NEWSLETTER_PROVIDER is required when keys of several providers are set (${keysSet.map((p) => PROVIDER_KEYS[p]).join(', ')}): choose one of ${PROVIDER_NAMES.join(', ')}`,
    );
    provider = 'local';
    newsletterChoice = 'default';
  } else if (keysSet.length === 1) {
    provider = keysSet[0]!;
    newsletterChoice = 'inferred';
  } else {
    // A list, form or audience without its key is a provider half set up: saying so beats
    // quietly keeping its subscribers in the local database.
    for (const p of Object.keys(PROVIDER_TARGETS) as (keyof typeof PROVIDER_TARGETS)[]) {
      if (e[PROVIDER_TARGETS[p]]) {
        problems.push(
          `${PROVIDER_KEYS[p]} is required when ${PROVIDER_TARGETS[p]} is set (or set NEWSLETTER_PROVIDER=local to keep subscribers in the database)`,
        );
      }
    }
    provider = 'local';
    newsletterChoice = 'default';
  }

  let newsletter: NewsletterConfig;
  const because = `when NEWSLETTER_PROVIDER is ${provider}`;
  switch (provider) {
    case 'mailchimp': {
      const apiKey = missing('MAILCHIMP_API_KEY', e.MAILCHIMP_API_KEY, because);
      const listId = missing('MAILCHIMP_LIST_ID', e.MAILCHIMP_LIST_ID, because);
      let baseUrl = e.MAILCHIMP_API_BASE_URL || undefined;
      if (!baseUrl) {
        const prefix = e.MAILCHIMP_SERVER_PREFIX ?? serverPrefixOf(apiKey);
        if (prefix === undefined) {
          if (apiKey) problems.push('MAILCHIMP_SERVER_PREFIX is required when MAILCHIMP_API_KEY does not end in -<data centre>, such as -us21');
        } else if (!/^[a-z]+\d+$/i.test(prefix)) {
          problems.push('MAILCHIMP_SERVER_PREFIX must look like us21');
        }
        baseUrl = `https://${prefix}.api.mailchimp.com/3.0`;
      }
      newsletter = { provider, mailchimp: { apiKey, listId, baseUrl } };
      break;
    }
    case 'kit':
      newsletter = {
        provider,
        kit: {
          apiKey: missing('KIT_API_KEY', e.KIT_API_KEY, because),
          formId: missing('KIT_FORM_ID', e.KIT_FORM_ID || undefined, because),
          baseUrl: e.KIT_API_BASE_URL || 'https://api.convertkit.com/v3',
        },
      };
      break;
    case 'resend':
      newsletter = {
        provider,
        resend: {
          apiKey: missing('RESEND_API_KEY', e.RESEND_API_KEY, because),
          audienceId: missing('RESEND_AUDIENCE_ID', e.RESEND_AUDIENCE_ID, because),
          baseUrl: e.RESEND_BASE_URL || 'https://api.resend.com',
        },
      };
      break;
    case 'local':
      newsletter = { provider };
      break;
  }

  let smtp: SmtpConfig | undefined;
  if (e.SMTP_URL) {
    smtp = {
      url: e.SMTP_URL,
      to: missing('CONTACT_TO', e.CONTACT_TO || undefined, 'when SMTP_URL is set'),
      from: missing('CONTACT_FROM', e.CONTACT_FROM || undefined, 'when SMTP_URL is set'),
    };
  }

  const allowedOrigins: string[] = [];
  for (const item of e.ALLOWED_ORIGINS.split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const origin = originOf(item);
    if (origin === undefined) problems.push(`ALLOWED_ORIGINS must be a comma-separated list of origins such as https://example.com`);
    else allowedOrigins.push(origin);
  }

  // An origin only: a path would suggest the forms live elsewhere, which they cannot.
  const publicUrl = e.PUBLIC_URL ? bareOriginOf(e.PUBLIC_URL) : undefined;
  if (e.PUBLIC_URL && publicUrl === undefined) {
    problems.push('PUBLIC_URL must be the address visitors type, such as https://www.example.com, without a path');
  }

  if (problems.length > 0) return { ok: false, problems: [...new Set(problems)] };
  return {
    ok: true,
    config: {
      host: e.HOST,
      port: e.PORT,
      dataDir: e.DATA_DIR,
      allowedOrigins,
      newsletter,
      newsletterChoice,
      smtp,
      delivery: { retryBaseMs: e.DELIVERY_RETRY_BASE_MS },
      rateLimit: { max: e.RATE_LIMIT_MAX, windowSeconds: e.RATE_LIMIT_WINDOW_SECONDS },
      trustProxy: e.TRUST_PROXY,
      publicUrl,
      redisUrl: e.REDIS_URL || undefined,
      logLevel: e.LOG_LEVEL,
      apiFastPath: e.API_FAST_PATH === 'on',
    },
  };
}

/**
 * The data directory alone, for the command-line tools, which should work even while
 * another part of the configuration is being fixed.
 */
export function readDataDir(env: Record<string, string | undefined>): string {
  return v.parse(DataDirField, env.DATA_DIR);
}

/** The error thrown by `requireConfig`, listing every problem on its own line. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Reads the configuration or throws a `ConfigError` naming every bad variable. */
export function requireConfig(env: Record<string, string | undefined>): Config {
  const result = readConfig(env);
  if (!result.ok) throw new ConfigError(result.problems);
  return result.config;
}

/** The configuration as it may be logged: secrets masked, URLs without passwords. */
export function describeConfig(config: Config): Record<string, unknown> {
  const n = config.newsletter;
  return {
    host: config.host,
    port: config.port,
    dataDir: config.dataDir,
    allowedOrigins: config.allowedOrigins,
    newsletterProvider: n.provider,
    newsletterChoice: config.newsletterChoice,
    ...(n.provider === 'mailchimp' && { mailchimp: { apiKey: mask(n.mailchimp.apiKey), listId: n.mailchimp.listId, baseUrl: n.mailchimp.baseUrl } }),
    ...(n.provider === 'kit' && { kit: { apiKey: mask(n.kit.apiKey), formId: n.kit.formId, baseUrl: n.kit.baseUrl } }),
    ...(n.provider === 'resend' && { resend: { apiKey: mask(n.resend.apiKey), audienceId: n.resend.audienceId, baseUrl: n.resend.baseUrl } }),
    smtp: config.smtp ? { url: withoutPassword(config.smtp.url), to: config.smtp.to, from: config.smtp.from } : 'off (messages are stored, not sent)',
    deliveryRetryBaseMs: config.delivery.retryBaseMs,
    rateLimit: config.rateLimit.max === 0 ? 'off' : config.rateLimit,
    trustProxy: config.trustProxy,
    publicUrl: config.publicUrl,
    redisUrl: config.redisUrl ? withoutPassword(config.redisUrl) : undefined,
  };
}

/** Mailchimp keys end in `-<data centre>`, such as `-us21`; that suffix is the default server prefix. */
function serverPrefixOf(apiKey: string): string | undefined {
  const dash = apiKey.lastIndexOf('-');
  return dash > 0 && dash < apiKey.length - 1 ? apiKey.slice(dash + 1) : undefined;
}

function originOf(value: string): string | undefined {
  try {
    const url = new URL(value);
    return /^https?:$/.test(url.protocol) ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The origin of a URL that is nothing but an origin (no path, query, fragment or user). */
function bareOriginOf(value: string): string | undefined {
  const url = new URL(value);
  const bare = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  return bare ? url.origin : undefined;
}

function mask(secret: string): string {
  return secret.length > 8 ? `…${secret.slice(-4)}` : '***';
}

function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '***';
  }
}

/**
 * Loads `.env` beside package.json into `process.env` when it exists; `ENV_FILE` names
 * another file, or '' for none. The server and the command-line tools share this rule.
 * Hint: variables already set in the environment win over the file.
 */
export function loadEnvFile(): void {
  const file = process.env.ENV_FILE ?? '.env';
  if (file && existsSync(file)) process.loadEnvFile(file);
}
