import { installed } from '../lazy.ts';
import type { DatabaseConfig } from './database.ts';
import type { NewsletterConfig } from './newsletter.ts';
import type { UploadsConfig } from './uploads.ts';

/**
 * The clients only some owners configure, which the package names as optional peers (decision
 * 0239): each with the setting that needs it. An owner installs the one they configure.
 */
const OPTIONAL_PACKAGES = [
  { name: 'pg', variable: 'DATABASE_URL', needed: (c: Needs) => Boolean(c.database.url) },
  { name: 'ioredis', variable: 'REDIS_URL', needed: (c: Needs) => Boolean(c.redisUrl) },
  { name: '@aws-sdk/client-s3', variable: 'S3_ENDPOINT', needed: (c: Needs) => Boolean(c.uploads.s3) },
  { name: '@mailchimp/mailchimp_marketing', variable: 'NEWSLETTER_PROVIDER=mailchimp', needed: (c: Needs) => c.newsletter.provider === 'mailchimp' },
  { name: 'resend', variable: 'NEWSLETTER_PROVIDER=resend', needed: (c: Needs) => c.newsletter.provider === 'resend' },
] as const;

type Needs = { database: DatabaseConfig; redisUrl: string | undefined; newsletter: NewsletterConfig } & UploadsConfig;

/**
 * One problem for each package the configuration needs and the project lacks, naming the
 * setting and the command that installs it, for the start-up's list of problems.
 */
export function missingPackages(config: Needs): string[] {
  return OPTIONAL_PACKAGES.filter((entry) => entry.needed(config) && !installed(entry.name)).map(
    ({ name, variable }) => `${variable} needs the package ${name}, which is not installed in this project: npm install ${name} (or pnpm add ${name})`,
  );
}
