import { type Admin, createAdmin } from '../admin/owner-inbox.ts';
import { retentionJobs } from '../admin/retention.ts';
import { type Config, storeOptionsOf } from '../config/config.ts';
import { exportChunks, spreadsheetOf } from '../contact/export.ts';
import { createHousekeeping } from '../housekeeping.ts';
import { createFormDrafts, type FormDrafts, formDraftsJob } from '../sql/drafts.ts';
import type { Scheduler } from '../scheduler.ts';
import { createSmtpMailer, type Mailer } from '../mail/mailer.ts';
import { createAutoReply, pruneAutoReplies } from '../contact/auto-reply.ts';
import { composeOwnerMail, ownerMailForm } from '../contact/message.ts';
import { contactForm, ownerForms } from '../forms/registry.ts';
import { createRecipients } from '../people/recipients.ts';
import type { FileRecords } from '../files/files.ts';
import { createFileLinks, type FileLinks } from '../files/links.ts';
import type { FileStorage } from '../files/storage.ts';
import { site, siteForMail } from '../site/site.ts';
import { type Consents, createConsents } from '../newsletter/consents.ts';
import { createOptIn, type OptIn } from '../newsletter/opt-in.ts';
import { createSignupWorker, type SignupWorker } from '../newsletter/signup-worker.ts';
import { createSignups, type Signups } from '../newsletter/signups.ts';
import { createWebhooks, type EventRecorder, type Webhooks } from '../webhooks/webhooks.ts';
import { eventFiles } from '../webhooks/files.ts';
import { filesOfMessages } from '../files/listing.ts';
import type { SubmissionStore } from '../contact/submission-store.ts';
import { createDeliveryWorker, type DeliveryWorker, outboxUpkeep } from '../contact/worker.ts';
import { queueSettings } from '../queue/settings.ts';
import { upkeepJobs } from '../queue/upkeep.ts';
import type { Logger } from '../log.ts';
import { type AbuseLimits, createAbuseLimits } from '../rate-limit.ts';
import { connectRedis } from '../redis.ts';
import type { NewsletterProvider } from '../newsletter/provider.ts';
import { createNewsletterProvider } from '../newsletter/registry.ts';
import { markMessageAsSpam, releaseMessage } from '../contact/corrections.ts';
import { createSpamParts, type SpamParts } from './spam-parts.ts';
import { openStore, type Store } from '../database/database.ts';
import { createUploads, type Uploads } from '../files/uploads.ts';
import { type ApiAccess, createApiAccess } from '../api/auth.ts';

/** Everything the endpoints use, built once per process from the configuration. */
export type Services = {
  config: Config;
  logger: Logger;
  /** Everything the service keeps: SQLite in DATA_DIR, or PostgreSQL at DATABASE_URL, with a repository per concern. */
  store: Store;
  /** The files sent with messages: their rows, their bytes (a folder or S3), and the signed links of webhooks to them. */
  files: { records: FileRecords; storage: FileStorage; links: FileLinks };
  provider: NewsletterProvider;
  /** Where the handlers keep each post (`store.submissions`). */
  submissions: SubmissionStore;
  limits: AbuseLimits;
  /** The REST API's keys and its own limits (per key, and failed authentications per client), read by `withKey` (api/auth.ts). */
  api: ApiAccess;
  /** Files with a message: the streamed reading, the virus scan, the storage (issue 31). */
  uploads: Uploads;
  /** Refused posts of people without JavaScript, kept briefly for the page they are redirected to (decision 0133). */
  drafts: FormDrafts;
  /** Emails stored contact messages to the owner; `undefined` without SMTP_URL, when they are only stored. */
  worker: DeliveryWorker | undefined;
  /** Called after a submission is stored, so delivery can start without waiting for the next poll. */
  onStored: (id: number) => void;
  /**
   * The inbox at /admin, built always: while `admin.isOn()` answers false (no ADMIN_PASSWORD_HASH,
   * nobody added), every /admin address is 404. `undefined` only in tests that build no admin.
   */
  admin: Admin | undefined;
  /** Every periodic job (src/lib/housekeeping.ts): retention, held spam, used challenges, the digest, the drafts of refused posts; started by `start()`. */
  housekeeping: Scheduler;
  /** The spam filter: the verdict on contact messages, challenges, held messages (issue 13). */
  spam: SpamParts;
  /** Signed webhooks and chat alerts: their deliveries and the worker that sends them (none without an endpoint). */
  webhooks: Webhooks;
  /** The recorder of the newsletter's events (webhooks.events), as the newsletter handler takes it. */
  events: EventRecorder;
  /** Double opt-in run by the site (local list, Resend), when NEWSLETTER_DOUBLE_OPT_IN is on. */
  optIn: OptIn | undefined;
  /** Consent records of signups Mailchimp or Kit confirm themselves, when NEWSLETTER_DOUBLE_OPT_IN is on. */
  consents: Consents | undefined;
  /** Consent records of signups that join at once, when NEWSLETTER_DOUBLE_OPT_IN is off (decision 0206). */
  consentOnJoin: Consents | undefined;
  /** Takes an address off the local list (an unsubscribe). */
  unsubscribeLocal: (email: string) => Promise<boolean>;
  /** Signups the provider could not take at once, and the worker that tries them again (none with the local list). */
  signups: { queue: Signups; worker: SignupWorker | undefined; enqueue: Signups['enqueue']; poke(): void };
  /** NEWSLETTER_QUEUE_ON_OUTAGE: a new signup during a provider's outage is queued and answered 200 rather than 503. */
  queueOnOutage: boolean;
  /** Starts the background work: the workers (messages left pending by an earlier process go first) and the housekeeping. */
  start(): void;
  /** Stops the background work, each worker finishing what it is sending so its outcome is recorded. */
  stopBackground(): Promise<void>;
  /** Stops the background work, then closes every connection (limits, database): the services end as one. */
  close(): Promise<void>;
};

/**
 * Builds the services: opens the store (PostgreSQL finishes connecting in the background; await `store.ready`), the chosen newsletter provider and, when SMTP
 * is configured, the delivery worker (not started: the server starts it once listening).
 */
export function createServices(config: Config, logger: Logger): Services {
  // One Redis client for the limits and the admin's throttle, closed with the rest.
  const redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : undefined;
  const smtp = config.smtp;
  const store = openStore(storeOptionsOf(config), logger);
  const mailSite = siteForMail(config);
  const uploads = createUploads(config.uploads, { dataDir: config.dataDir, logger });
  // One storage for what posts keep and what the owner's mail, the admin and the links read.
  const files = {
    records: store.files,
    storage: uploads.storage,
    links: createFileLinks(store.sql, { lifetimeSeconds: config.fileDelivery.linkLifetimeSeconds }),
  };
  const mailer: Mailer | undefined = smtp ? createSmtpMailer(smtp, { logger }) : undefined;
  // Who each message's mail goes to, read from the people at each try (people/recipients.ts).
  const recipients = smtp ? createRecipients(store.sql, smtp.to, logger) : undefined;
  const worker =
    smtp && mailer
      ? createDeliveryWorker({
          outbox: store.outbox,
          mailer,
          compose: async (submission) =>
            composeOwnerMail(
              submission,
              smtp,
              mailSite,
              { records: files.records, storage: files.storage, maxBytes: config.fileDelivery.mailAttachMaxBytes },
              await recipients?.forForm(ownerMailForm(submission.form)),
            ),
          logger,
          retryBaseMs: config.delivery.retryBaseMs,
          leaseMs: queueSettings('outbox', config.delivery).leaseMs,
          maxAttempts: config.delivery.maxAttempts,
        })
      : undefined;
  const provider = createNewsletterProvider(config.newsletter, store.subscribers, {}, { doubleOptIn: config.doubleOptIn });
  const consents = createConsents(store.sql);
  // The site sends the confirmation itself for the local list and Resend; Mailchimp and Kit send their own.
  const ownConfirmation = provider.name === 'local' || provider.name === 'resend';
  const optIn =
    config.doubleOptIn && ownConfirmation && smtp && mailer && config.publicUrl
      ? createOptIn({ consents, mailer, smtp, site, publicUrl: config.publicUrl })
      : undefined;
  const autoReply = config.autoReply && smtp && mailer ? createAutoReply({ settings: config.autoReply, smtp, mailer, site, sql: store.sql }) : undefined;
  const webhooks = createWebhooks(store.sql, config.webhooks, {
    siteName: site.name,
    logger,
    autoReply,
    // The mail's lease (DELIVERY_LEASE_MS, queue/settings.ts): longer than a webhook's 15 s try;
    // after it, another instance takes up what a killed one left.
    leaseMs: queueSettings('webhooks', config.delivery).leaseMs,
    maxAttempts: config.delivery.maxAttempts,
    // A message's files as signed links, absolute from PUBLIC_URL (the path alone without it).
    withFiles: (event) => eventFiles(event, { records: files.records, links: files.links, origin: config.publicUrl ?? '' }),
  });
  const signupQueue = createSignups(store.sql, { retryBaseMs: config.delivery.retryBaseMs, maxAttempts: config.delivery.maxAttempts });
  const signupWorker = provider.name === 'local' ? undefined : createSignupWorker({ signups: signupQueue, provider, events: webhooks.events, logger });
  // A stored message is news for the mail worker and the webhook worker alike.
  const onStored = () => {
    worker?.poke();
    webhooks.worker?.poke();
  };
  const spam = createSpamParts(config, store, mailer, logger);
  // The owner's corrections, as `npm run inbox -- release/spam` makes them, with Akismet told.
  const corrections = { spam: spam.store, outbox: store.outbox, akismet: spam.service.akismet, logger };
  const limits = createAbuseLimits(config, logger, redis);
  const api = createApiAccess(store.sql, config, logger, redis);
  // Built always: /admin is on with ADMIN_PASSWORD_HASH, or once a person or an invitation exists
  // (admin.isOn). After the store is ready, it makes the first owner from the hash (admin.ready).
  const admin = createAdmin(
    {
      passwordHash: config.admin?.passwordHash,
      passwordHashText: config.admin?.hashText,
      contactTo: config.smtp?.to,
      retentionDays: config.retentionDays,
      publicUrl: config.publicUrl,
      siteName: site.name,
      requirePasskey: config.requirePasskey,
    },
    {
      store,
      logger,
      providerName: provider.name,
      redis,
      limits,
      spam: {
        markSpam: (id) => markMessageAsSpam(id, corrections),
        release: async (id) => {
          const released = await releaseMessage(id, corrections);
          if (released.found && released.changed) onStored();
          return released;
        },
        reasons: async (id) => (await spam.store.details(id))?.reasons ?? [],
      },
      exportMessages: (format, { excel, scope }) =>
        exportChunks(store.outbox, format, { ...(excel && { spreadsheet: spreadsheetOf(site) }), files: (ids) => filesOfMessages(store.sql, ids), scope }),
      webhooks: webhooks.deliveries,
      signups: signupQueue,
      linkMail: { smtp, mailer, site: mailSite, forms: [contactForm, ...ownerForms].map((form) => form.name) },
      apiKeys: api.keys,
    },
  );
  // One housekeeping for every periodic job: retention of each kind, the used challenges, the digest, the drafts.
  const retention = retentionJobs({
    sessions: admin.sessions,
    queries: admin.queries,
    audit: admin.audit,
    retentionDays: config.retentionDays,
    webhooks: webhooks.deliveries,
    autoReplies: { prune: (before) => pruneAutoReplies(store.sql, before) },
    challenges: admin.passkeys?.challenges,
    logger,
  });
  const drafts = createFormDrafts(store.sql);
  // Each queue's upkeep (queue/upkeep.ts): rows whose every try died with its process are given up, once a lease.
  // Whose lease ran out is read on the database's clock, as the workers' claims read it (decision 0270).
  const outboxUpkept = outboxUpkeep({ outbox: store.outbox, logger, maxAttempts: config.delivery.maxAttempts });
  const queues = upkeepJobs(
    {
      outbox: () => outboxUpkept(),
      webhooks: () => webhooks.deliveries.upkeep(),
      signups: () => signupQueue.upkeep(),
    },
    config.delivery,
  );
  const housekeeping = createHousekeeping([...queues, ...retention, ...spam.jobs, formDraftsJob(drafts), ...uploads.jobs(store.files)], { logger });
  let stopping: Promise<void> | undefined;
  const stopBackground = () => {
    stopping ??= Promise.all([worker?.stop(), webhooks.worker?.stop(), signupWorker?.stop(), housekeeping.stop()]).then(() => {});
    return stopping;
  };
  return {
    config,
    logger,
    store,
    files,
    provider,
    submissions: store.submissions,
    limits,
    api,
    uploads,
    drafts,
    worker,
    onStored,
    admin,
    housekeeping,
    spam,
    webhooks,
    events: webhooks.events,
    optIn,
    consents: config.doubleOptIn && !ownConfirmation ? consents : undefined,
    consentOnJoin: config.doubleOptIn ? undefined : consents,
    unsubscribeLocal: (email: string) => store.subscribers.remove(email),
    signups: {
      queue: signupQueue,
      worker: signupWorker,
      enqueue: (email, name, now) => signupQueue.enqueue(email, name, now),
      poke: () => signupWorker?.poke(),
    },
    queueOnOutage: config.newsletterQueueOnOutage,
    start() {
      worker?.start();
      webhooks.worker?.start();
      signupWorker?.start();
      housekeeping.start();
    },
    stopBackground,
    async close() {
      await stopBackground();
      await limits.close();
      redis?.disconnect();
      await store.close();
    },
  };
}
