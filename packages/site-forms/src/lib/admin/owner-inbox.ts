import type { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { type Actor, authorize, type FormScope, inScope } from '../access/permissions.ts';
import type { DeliveryEvent, Submission } from '../contact/outbox.ts';
import type { Logger } from '../log.ts';
import { engineName } from '../sql/sql.ts';
import type { Store } from '../database/database.ts';
import type { Signups } from '../newsletter/signups.ts';
import { createPasskeys, type Passkeys, relyingPartyOf, type WebAuthnLibrary } from '../people/passkeys.ts';
import { createPeopleStore, type PeopleStore } from '../people/store.ts';
import type { Deliveries } from '../webhooks/deliveries.ts';
import type { AdminDeps, Exports, MessageCommands } from './actions/index.ts';
import { createPasskeyOptionsLimit } from './actions/passkeys.ts';
import type { AdminKeys, KeyDeps } from './actions/keys.ts';
import type { TeamDeps } from './actions/people.ts';
import type { Mailer } from '../mail/mailer.ts';
import { createLinkMailer, type LinkMailSite } from '../people/link-mail.ts';
import { createLinks } from '../people/links.ts';
import { createMailLimits } from './mail-limits.ts';
import { createDevices, type Devices } from './device.ts';
import { type AuditLog, createAuditLog } from './audit.ts';
import { CHART_DAYS, type DayCount, lastDays } from './chart.ts';
import { createPasswordCheck, hashPassword, type PasswordHash } from './password.ts';
import type { AbuseLimits } from '../rate-limit.ts';
import { type AdminQueries, createAdminQueries, type DeliveryHealth, type MessageQuery, type MessageRow, type SubscriberRow } from './queries.ts';
import { createSessions, type SessionStore, type Sessions } from './session.ts';
import { createSessionStore } from './session-store.ts';
import { createSignInThrottle, type ThrottleDelays } from './throttle.ts';

/**
 * The admin's settings from the configuration: ADMIN_PASSWORD_HASH (the first owner's password,
 * when set), CONTACT_TO (the first owner's email) and how long messages are kept.
 */
export type AdminSettings = {
  passwordHash: PasswordHash | undefined;
  /** ADMIN_PASSWORD_HASH as written, for the tombstone of a removed first owner (people/store.ts). */
  passwordHashText: string | undefined;
  contactTo?: string | undefined;
  retentionDays: number | undefined;
  /** PUBLIC_URL and the site's name: the passkeys' relying party (none without a domain: passkeys off). */
  publicUrl?: string | undefined;
  siteName?: string | undefined;
  /** ADMIN_REQUIRE_PASSKEY. */
  requirePasskey?: boolean | undefined;
};

/** How long the admin, while off, waits before asking the database again whether someone was added. */
export const OFF_RECHECK_MS = 10_000;

/** One message as its page shows it. */
export type MessageDetail = { submission: Submission; history: DeliveryEvent[]; spamReasons: string[] };

/** What the overview shows. */
export type Overview = {
  counts: Record<string, number>;
  days: DayCount[];
  delivery: DeliveryHealth;
  provider: string;
  database: string;
  retentionDays: number | undefined;
  /** How many messages were held as spam since the owner's previous visit to the overview, and when that was. */
  held: { since: string | undefined; count: number };
};

/**
 * What one person (or key) may read of the inbox: the messages of their forms only, and the
 * subscribers only with the local list in their forms. Hint: a message of another form is
 * `undefined`, exactly as one that does not exist, so its page is the same 404.
 */
export type AdminView = {
  /** The forms this view reads. */
  scope: FormScope;
  messages(query: MessageQuery): Promise<{ rows: MessageRow[]; total: number }>;
  message(id: number): Promise<MessageDetail | undefined>;
  overview(now: Date): Promise<Overview>;
  /** A page of the local list; none when the list is not in the actor's forms. */
  subscribers(search: string | undefined, page: number): Promise<{ rows: SubscriberRow[]; total: number }>;
};

/** The inbox of the owner and their team: what its pages read and what its posts do. */
export type Admin = {
  /**
   * Whether /admin exists: ADMIN_PASSWORD_HASH is set, or a person other than its first owner
   * (left by a hash since unset) or an open invitation is in the database. Once on, on for good (the last owner cannot be removed); while off, the
   * database is asked again at most every 10 seconds.
   */
  isOn(): Promise<boolean>;
  /** Settles once the first owner from ADMIN_PASSWORD_HASH is made or found (after the store is ready). */
  ready: Promise<void>;
  /** The people who sign in. */
  people: PeopleStore;
  /** Their passkeys; `undefined` while passkeys are off (no PUBLIC_URL on a domain). */
  passkeys: Passkeys | undefined;
  /** The people's links, their mail and its limits, and the site's forms (the people pages). */
  team: TeamDeps;
  /** The API keys and the site's forms (/admin/keys); `undefined` when the admin was built without them (tests of other pages). */
  apiKeys: KeyDeps | undefined;
  deps: AdminDeps;
  /** The webhooks' deliveries and their tries. */
  webhooks: Deliveries;
  /** The device cookie of a browser that signed in (set by the overview page). */
  devices: Devices;
  /** The signups waiting for the provider, or given up. */
  signups: Signups;
  sessions: Sessions;
  audit: AuditLog;
  queries: AdminQueries;
  retentionDays: number | undefined;
  /** What `actor` may read: every query of a page goes through it (access/permissions.ts). */
  for(actor: Actor): AdminView;
  /** One message, whatever its form (the tools'; a page reads `for(actor).message`). */
  message(id: number): Promise<MessageDetail | undefined>;
  /** The overview of every form (the tools'; a page reads `for(actor).overview`). */
  overview(now: Date): Promise<Overview>;
};

/** What the admin is built from; `spam` comes from the spam filter, `delays` and `dummy` only from the tests. */
export type AdminParts = {
  store: Store;
  logger: Logger;
  providerName: string;
  redis?: Redis | undefined;
  /** The server's abuse limits, whose per-address counts an erasure forgets. */
  limits?: Pick<AbuseLimits, 'forgetAddress'> | undefined;
  spam: Pick<MessageCommands, 'markSpam' | 'release'> & { reasons(id: number): Promise<string[]> };
  exportMessages: Exports['messages'];
  /** The webhooks' deliveries: listed on /admin/webhooks, replayed from there. */
  webhooks: Deliveries;
  /** The signups waiting for the provider: listed on /admin/subscribers, retried from there. */
  signups: Signups;
  delays?: ThrottleDelays;
  /** The hash an unknown account's password is verified against; made at start (`dummyHash`) unless a test brings a cheaper one. */
  dummy?: PasswordHash;
  /** @simplewebauthn/server's functions; the tests bring their own, the server loads the library at the first ceremony. */
  webauthn?: () => Promise<WebAuthnLibrary>;
  /** How links reach people: the site's SMTP (none: the owner is shown them), from CONTACT_FROM, and the site's forms. */
  linkMail?: { smtp: { from: string } | undefined; mailer: Mailer | undefined; site: LinkMailSite; forms: readonly string[] };
  /** The REST API's keys (api/keys.ts), made and revoked on /admin/keys. */
  apiKeys?: AdminKeys | undefined;
};

/** The admin's own tables and queries over the store's SQL. */
export function createAdminStores(
  store: Pick<Store, 'sql' | 'messages'>,
  limits?: Pick<AbuseLimits, 'forgetAddress'>,
  { legacyOwner = false }: { legacyOwner?: boolean } = {},
): { sessionStore: SessionStore; audit: AuditLog; queries: AdminQueries } {
  const { sql, messages } = store;
  return { sessionStore: createSessionStore(sql, { legacyOwner }), audit: createAuditLog(sql), queries: createAdminQueries(sql, messages, { limits }) };
}

/**
 * Builds the admin over the store, on or off (`isOn`); once the store is ready, it makes the first
 * owner from ADMIN_PASSWORD_HASH if they are not there yet (`ready`).
 */
export function createAdmin(settings: AdminSettings, parts: AdminParts, now: () => Date = () => new Date()): Admin {
  const { store, logger, spam } = parts;
  const { sessionStore, audit, queries } = createAdminStores(store, parts.limits, { legacyOwner: settings.passwordHash !== undefined });
  const sessions = createSessions(sessionStore);
  const people = createPeopleStore(store.sql, { passwordHash: settings.passwordHashText, contactTo: settings.contactTo });
  const ready = store.ready
    .then(() => people.ensureEnvOwner(now()))
    .then(
      (state) => logger.debug('admin.env_owner', { state }),
      // The store's own failure stops the start (server/boot.ts); this one is told, and sign-in finds no first owner.
      (error: unknown) => logger.error('admin.env_owner_failed', { error: String(error) }),
    );
  let on = settings.passwordHash !== undefined;
  let askedAt = Number.NEGATIVE_INFINITY;
  const isOn = async () => {
    if (on || now().getTime() - askedAt < OFF_RECHECK_MS) return on;
    askedAt = now().getTime();
    await store.ready;
    // The first owner exists only while ADMIN_PASSWORD_HASH is set (with it, /admin is on anyway):
    // the row left by a hash since removed turns nothing on.
    const found = await store.sql.get(
      `SELECT 1 AS found FROM admin_users WHERE origin <> 'env' UNION ALL
       SELECT 1 AS found FROM admin_links WHERE kind = 'invite' AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?`,
      [now().toISOString()],
    );
    on = found !== undefined;
    return on;
  };
  // The store's one machine: the admin's actions record what the server's and the tools' do.
  const machine = store.messages;
  const commands: MessageCommands = {
    retry: (id) => machine.requeue(id),
    markSpam: spam.markSpam,
    release: spam.release,
    remove: (id) => machine.remove(id),
  };
  const relyingParty = relyingPartyOf(settings.publicUrl, settings.siteName ?? '');
  const passkeys =
    relyingParty && createPasskeys({ sql: store.sql, relyingParty, findPerson: (id) => people.find(id), ...(parts.webauthn && { library: parts.webauthn }) });
  const mailLimits = createMailLimits({ redis: parts.redis, logger });
  const team: TeamDeps = {
    people,
    links: createLinks(store.sql, { passwordHash: settings.passwordHashText, contactTo: settings.contactTo }),
    limits: mailLimits,
    mail: createLinkMailer({
      smtp: parts.linkMail?.smtp,
      mailer: parts.linkMail?.mailer,
      site: parts.linkMail?.site ?? { name: '', senderName: '' },
      allow: (email) => mailLimits.linkMail(email),
      // The reason only: the mail's link must never reach a log.
      onFailure: (reason) => logger.warn('admin.link_mail_failed', { reason }),
    }),
    forms: parts.linkMail?.forms ?? [],
    publicUrl: settings.publicUrl,
    hashPassword: (password) => hashPassword(password),
  };
  const apiKeys: KeyDeps | undefined = parts.apiKeys && { keys: parts.apiKeys, forms: parts.linkMail?.forms ?? [] };
  const devices = createDevices(settings.passwordHash ?? { salt: randomBytes(32), key: randomBytes(32) });
  const deps: AdminDeps = {
    checkPassword: createPasswordCheck(settings.passwordHash, undefined, undefined, undefined, parts.dummy),
    people: {
      // The first owner is looked for once they are made, however early the first sign-in comes.
      envOwner: () => ready.then(() => people.envOwner()),
      findByEmail: (email) => people.findByEmail(email),
      signedIn: (id, at) => people.signedIn(id, at),
      find: (id) => people.find(id),
    },
    passkeys,
    requirePasskey: settings.requirePasskey === true,
    passkeyOptionsLimit: passkeys && createPasskeyOptionsLimit({ redis: parts.redis, logger }),
    devices,
    sessions,
    throttle: createSignInThrottle({ redis: parts.redis, logger, ...(parts.delays && { delays: parts.delays }) }),
    audit,
    queries,
    commands,
    exporting: {},
    exports: {
      messages: parts.exportMessages,
      countMessages: async (scope) => Object.values(await queries.countByStatus(scope)).reduce((sum, n) => sum + n, 0),
      subscribers: () => store.subscribers.list(),
    },
    webhooks: parts.webhooks,
    signups: parts.signups,
    team,
    apiKeys,
  };
  const message = async (id: number, scope: FormScope): Promise<MessageDetail | undefined> => {
    const submission = await store.outbox.find(id);
    if (!submission || !inScope(scope, submission.form)) return undefined;
    const [history, spamReasons] = await Promise.all([store.outbox.history(id), spam.reasons(id)]);
    return { submission, history, spamReasons };
  };
  const overview = async (at: Date, scope: FormScope, personId?: number): Promise<Overview> => {
    const since = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() - (CHART_DAYS - 1)));
    const [counts, perDay, delivery, visit] = await Promise.all([
      queries.countByStatus(scope),
      queries.perDay(since, scope),
      queries.deliveryHealth(scope),
      queries.visitOverview(at, scope, personId),
    ]);
    return {
      counts,
      days: lastDays(perDay, at),
      delivery,
      provider: parts.providerName,
      database: engineName(store.engine),
      retentionDays: settings.retentionDays,
      held: { since: visit.previous, count: visit.heldSince },
    };
  };
  const EVERY_FORM: FormScope = { all: true };
  return {
    isOn,
    ready,
    people,
    passkeys,
    team,
    apiKeys,
    deps,
    webhooks: parts.webhooks,
    signups: parts.signups,
    devices,
    sessions,
    audit,
    queries,
    retentionDays: settings.retentionDays,
    for(actor) {
      const { scope } = actor;
      return {
        scope,
        messages: (query) => queries.messages(query, scope),
        message: (id) => message(id, scope),
        // A person's previous visit is their own (the API has no overview: a key would read the site's one time).
        overview: (at) => overview(at, scope, actor.kind === 'person' ? actor.id : undefined),
        subscribers: async (search, page) => (authorize(actor, 'subscribers.read') === 'allow' ? queries.subscribers(search, page) : { rows: [], total: 0 }),
      };
    },
    message: (id) => message(id, EVERY_FORM),
    overview: (at) => overview(at, EVERY_FORM),
  };
}
