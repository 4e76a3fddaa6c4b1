import * as v from 'valibot';
import { type ConfigConcern, integer, readVariables } from './variables.ts';

/**
 * How a message's files reach the owner beyond the admin: how many bytes of them the owner's mail
 * carries as attachments (the rest are linked to the admin), and how long the signed download
 * links of webhooks and chat alerts stay open.
 */
export type FileDeliveryConfig = { fileDelivery: { mailAttachMaxBytes: number; linkLifetimeSeconds: number } };

const VARIABLES = {
  // 10 MiB: what most mail servers take in one message once base64 has added its third.
  MAIL_ATTACH_MAX_BYTES: v.optional(integer(0, 1024 * 1024 * 1024), '10485760'),
  // A week: long enough for a receiver that retries over a weekend, short enough that an old alert opens nothing.
  FILE_LINK_LIFETIME_SECONDS: v.optional(integer(1, 366 * 24 * 3600), '604800'),
};

/** MAIL_ATTACH_MAX_BYTES and FILE_LINK_LIFETIME_SECONDS. */
export const fileDelivery: ConfigConcern<FileDeliveryConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    return { config: { fileDelivery: { mailAttachMaxBytes: e.MAIL_ATTACH_MAX_BYTES, linkLifetimeSeconds: e.FILE_LINK_LIFETIME_SECONDS } }, problems };
  },
  describe: ({ fileDelivery: f }) => ({
    mailAttachMaxBytes: f.mailAttachMaxBytes === 0 ? 'off (files are linked)' : f.mailAttachMaxBytes,
    fileLinkLifetimeSeconds: f.linkLifetimeSeconds,
  }),
};
