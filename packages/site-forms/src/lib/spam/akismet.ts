import { OUTSIDE_TIMEOUT_MS, type OutsideCheck, postUrlEncoded } from './outside.ts';

/** Where Akismet answers; tests point the client at a fake on 127.0.0.1. */
export const AKISMET_BASE_URL = 'https://rest.akismet.com';

/** A contact message as Akismet reads it, with the visitor's address and browser it came from. */
export type AkismetComment = { name: string; email: string; message: string; ip: string; userAgent?: string | undefined; referrer?: string | undefined };

/** The answer of a correction sent to Akismet. */
export type AkismetReport = { ok: true } | { ok: false; detail: string; check?: string };

/** Akismet's spam check for contact forms, and the corrections that teach it. */
export interface AkismetClient {
  /** `comment-check` with `comment_type=contact-form`: `spam: true` when Akismet thinks so. */
  check(comment: AkismetComment): Promise<OutsideCheck>;
  /** `submit-spam`: the owner marked a message Akismet let through as spam. */
  submitSpam(comment: AkismetComment): Promise<AkismetReport>;
  /** `submit-ham`: the owner released a message Akismet held. */
  submitHam(comment: AkismetComment): Promise<AkismetReport>;
}

/** What Akismet answers a correction with (its documentation). */
const THANKS = 'Thanks for making the web a better place.';

/**
 * Creates the Akismet client for one key and site (`blog` is the site's public address).
 * Hint: Akismet answers 200 with `invalid` for a wrong key, and its `X-akismet-debug-help`
 * header says why; neither reaches a visitor.
 */
export function createAkismetClient({
  apiKey,
  blog,
  baseUrl = AKISMET_BASE_URL,
  timeoutMs = OUTSIDE_TIMEOUT_MS,
}: {
  apiKey: string;
  blog: string;
  baseUrl?: string;
  timeoutMs?: number;
}): AkismetClient {
  const call = (method: string, comment: AkismetComment) => postUrlEncoded(`${baseUrl}/1.1/${method}`, akismetFields(apiKey, blog, comment), timeoutMs);
  const report = async (method: string, comment: AkismetComment): Promise<AkismetReport> => {
    const answer = await call(method, comment);
    if (!answer.ok) return { ok: false, detail: answer.detail };
    if (answer.status === 200 && answer.text.trim() === THANKS) return { ok: true };
    return refusal(answer.status, answer.text);
  };
  return {
    async check(comment) {
      const answer = await call('comment-check', comment);
      if (!answer.ok) return { ok: false, detail: answer.detail };
      const text = answer.text.trim();
      if (answer.status === 200 && text === 'true') return { ok: true, spam: true };
      if (answer.status === 200 && text === 'false') return { ok: true, spam: false };
      return refusal(answer.status, text);
    },
    submitSpam: (comment) => report('submit-spam', comment),
    submitHam: (comment) => report('submit-ham', comment),
  };
}

/** The form fields of every Akismet call for one message. */
export function akismetFields(apiKey: string, blog: string, comment: AkismetComment): Record<string, string> {
  const fields: Record<string, string> = {
    api_key: apiKey,
    blog,
    user_ip: comment.ip,
    comment_type: 'contact-form',
    comment_author: comment.name,
    comment_author_email: comment.email,
    comment_content: comment.message,
    blog_charset: 'UTF-8',
  };
  if (comment.userAgent) fields.user_agent = comment.userAgent;
  if (comment.referrer) fields.referrer = comment.referrer;
  return fields;
}

function refusal(status: number, text: string): { ok: false; detail: string; check?: string } {
  // Only Akismet's one-word answers are repeated: anything longer could be a proxy's page.
  if (status === 200 && text.trim() === 'invalid') return { ok: false, detail: 'refused the key (invalid)', check: 'AKISMET_API_KEY' };
  return { ok: false, detail: `HTTP ${status} without a verdict` };
}
