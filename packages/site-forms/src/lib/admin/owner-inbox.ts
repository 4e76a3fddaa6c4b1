import type { Redis } from 'ioredis';
import type { DeliveryEvent, Submission } from '../contact/outbox.ts';
import type { Logger } from '../log.ts';
import { engineName } from '../sql/sql.ts';
import type { Store } from '../database/database.ts';
import type { Signups } from '../newsletter/signups.ts';
import type { Deliveries } from '../webhooks/deliveries.ts';
import type { AdminDeps, Exports, MessageCommands } from './actions/index.ts';
import { createDevices, type Devices } from './device.ts';
import { type AuditLog, createAuditLog } from './audit.ts';
import { CHART_DAYS, type DayCount, lastDays } from './chart.ts';
import { createPasswordCheck, type PasswordHash } from './password.ts';
import type { AbuseLimits } from '../rate-limit.ts';
import { type AdminQueries, createAdminQueries, type DeliveryHealth } from './queries.ts';
import { createSessions, type SessionStore, type Sessions } from './session.ts';
import { createSessionStore } from './session-store.ts';
import { createSignInThrottle, type ThrottleDelays } from './throttle.ts';

/** The admin's settings from the configuration: the password's hash and how long messages are kept. */
export type AdminSettings = { passwordHash: PasswordHash; retentionDays: number | undefined };

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

/** The owner's inbox: what its pages read and what its posts do. */
export type Admin = {
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
  message(id: number): Promise<MessageDetail | undefined>;
  overview(now: Date): Promise<Overview>;
};

/** What the admin is built from; `spam` comes from the spam filter, `delays` only from the tests. */
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
};

/** The admin's own tables and queries over the store's SQL. */
export function createAdminStores(
  store: Pick<Store, 'sql' | 'messages'>,
  limits?: Pick<AbuseLimits, 'forgetAddress'>,
): { sessionStore: SessionStore; audit: AuditLog; queries: AdminQueries } {
  const { sql, messages } = store;
  return { sessionStore: createSessionStore(sql), audit: createAuditLog(sql), queries: createAdminQueries(sql, messages, { limits }) };
}

/** Builds the admin over the store, when `ADMIN_PASSWORD_HASH` is set. */
export function createAdmin(settings: AdminSettings, parts: AdminParts): Admin {
  const { store, logger, spam } = parts;
  const { sessionStore, audit, queries } = createAdminStores(store, parts.limits);
  const sessions = createSessions(sessionStore);
  // The store's one machine: the admin's actions record what the server's and the tools' do.
  const machine = store.messages;
  const commands: MessageCommands = {
    retry: (id) => machine.requeue(id),
    markSpam: spam.markSpam,
    release: spam.release,
    remove: (id) => machine.remove(id),
  };
  const devices = createDevices(settings.passwordHash);
  const deps: AdminDeps = {
    checkPassword: createPasswordCheck(settings.passwordHash),
    devices,
    sessions,
    throttle: createSignInThrottle({ redis: parts.redis, logger, ...(parts.delays && { delays: parts.delays }) }),
    audit,
    queries,
    commands,
    exporting: {},
    exports: {
      messages: parts.exportMessages,
      countMessages: async () => Object.values(await queries.countByStatus()).reduce((sum, n) => sum + n, 0),
      subscribers: () => store.subscribers.list(),
    },
    webhooks: parts.webhooks,
    signups: parts.signups,
  };
  return {
    deps,
    webhooks: parts.webhooks,
    signups: parts.signups,
    devices,
    sessions,
    audit,
    queries,
    retentionDays: settings.retentionDays,
    async message(id) {
      const submission = await store.outbox.find(id);
      if (!submission) return undefined;
      const [history, spamReasons] = await Promise.all([store.outbox.history(id), spam.reasons(id)]);
      return { submission, history, spamReasons };
    },
    async overview(now) {
      const since = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (CHART_DAYS - 1)));
      const [counts, perDay, delivery, visit] = await Promise.all([
        queries.countByStatus(),
        queries.perDay(since),
        queries.deliveryHealth(),
        queries.visitOverview(now),
      ]);
      return {
        counts,
        days: lastDays(perDay, now),
        delivery,
        provider: parts.providerName,
        database: engineName(store.engine),
        retentionDays: settings.retentionDays,
        held: { since: visit.previous, count: visit.heldSince },
      };
    },
  };
}
