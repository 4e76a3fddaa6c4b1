import * as v from 'valibot';
import { texts } from '../i18n/texts.ts';
import { type ConfigConcern, integer, optionalText, readVariables } from './variables.ts';

/** The automatic reply to the sender of an accepted message (`AUTO_REPLY`), off by default. */
export type AutoReplyConfig = {
  autoReply: { subject: string; text: string; includeMessage: boolean; maxPerHour: number } | undefined;
};

/**
 * Replies a site sends in one clock hour at most, by default: more contact messages than a small
 * site gets in an hour, few enough that a script solving the proof for a list of addresses mails
 * 240 strangers a day at most (decision 0149).
 */
export const AUTO_REPLY_MAX_PER_HOUR_DEFAULT = 10;

const BOOLEAN = v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(['true', 'false'], 'must be true or false')), 'false');

const VARIABLES = {
  AUTO_REPLY: BOOLEAN,
  AUTO_REPLY_SUBJECT: optionalText,
  AUTO_REPLY_TEXT: optionalText,
  AUTO_REPLY_INCLUDE_MESSAGE: BOOLEAN,
  AUTO_REPLY_MAX_PER_HOUR: v.optional(integer(1, 100_000), String(AUTO_REPLY_MAX_PER_HOUR_DEFAULT)),
};

/** What the reply says when the owner keeps the defaults, in the site's language; `{site}` and `{name}` are filled in. */
export const AUTO_REPLY_DEFAULTS = { subject: texts.mail.autoReply.subject, text: texts.mail.autoReply.text };

/** AUTO_REPLY, AUTO_REPLY_SUBJECT, AUTO_REPLY_TEXT (`\n` for a new line), AUTO_REPLY_INCLUDE_MESSAGE, AUTO_REPLY_MAX_PER_HOUR. */
export const autoReply: ConfigConcern<AutoReplyConfig> = {
  read(env) {
    const { config: e, problems } = readVariables(VARIABLES, env);
    if (e.AUTO_REPLY === 'true' && !env.SMTP_URL?.trim()) problems.push('AUTO_REPLY needs a mail server: set SMTP_URL, CONTACT_TO and CONTACT_FROM');
    // Only a sender whose browser solved the page's proof is answered; with the filter off nobody is asked for one.
    if (e.AUTO_REPLY === 'true' && env.SPAM_FILTER?.trim().toLowerCase() === 'off') {
      problems.push('AUTO_REPLY needs SPAM_FILTER=on: only a sender whose browser solved the page’s proof of work (or passed Turnstile) is answered');
    }
    const subject = e.AUTO_REPLY_SUBJECT ?? AUTO_REPLY_DEFAULTS.subject;
    if (/[\r\n]/.test(subject)) problems.push('AUTO_REPLY_SUBJECT must be one line');
    return {
      config: {
        autoReply:
          e.AUTO_REPLY === 'true'
            ? {
                subject,
                text: (e.AUTO_REPLY_TEXT ?? AUTO_REPLY_DEFAULTS.text).replace(/\\n/g, '\n'),
                includeMessage: e.AUTO_REPLY_INCLUDE_MESSAGE === 'true',
                maxPerHour: e.AUTO_REPLY_MAX_PER_HOUR,
              }
            : undefined,
      },
      problems,
    };
  },
  describe: ({ autoReply: on }) => ({ autoReply: on ? { subject: on.subject, includeMessage: on.includeMessage, maxPerHour: on.maxPerHour } : 'off' }),
};
