/** The reasons the content rules give, each for one thing a person writing to a site rarely does. */
export type ContentReason = 'too-many-links' | 'link-in-name' | 'link-markup';

/** How many links a message may hold before it is held (`SPAM_MAX_LINKS`). */
export const DEFAULT_MAX_LINKS = 2;

/** An address a visitor could click: with a scheme, or starting with `www.`. */
const LINK = /\b(?:https?:\/\/|www\.)[^\s<>"'\]]+/giu;

/** A link in a name: with a scheme, or starting with `www.`. */
const LINK_IN_NAME = /\b(?:https?:\/\/|www\.)/i;

/**
 * A name that is a domain, such as `cheap-pills.shop` or `WIN-BIG.COM`: a label, a dot, and an
 * ending in one case (lower or upper), or a common ending capitalised (`Casino.Online`).
 * Hint: "J.R.R. Tolkien", "St. John" and "Mr.Smith" stay names: after each dot comes a space,
 * one letter, or a capitalised word that is no common ending.
 */
const DOMAIN_IN_NAME = /[\p{L}\p{N}-]\.(?:[a-z]{2,}|[A-Z]{2,}|(?:Com|Net|Org|Info|Biz|Online|Shop|Site|Store|Xyz|Top|Club|Io|Co|Ru|De|Uk|Us))\b/u;

/** HTML or BBCode link markup: nobody types it into a plain text box, link-spam tools do. */
const LINK_MARKUP = /<a\s[^>]*href\s*=|\[url\b|\[link\b/i;

/** Counts the links in `text`. */
export function countLinks(text: string): number {
  return text.match(LINK)?.length ?? 0;
}

/** The content rules' reasons against a contact message; none for a message a person would write. */
export function contentReasons({ name, message }: { name: string; message: string }, maxLinks = DEFAULT_MAX_LINKS): ContentReason[] {
  const reasons: ContentReason[] = [];
  if (countLinks(message) > maxLinks) reasons.push('too-many-links');
  if (LINK_IN_NAME.test(name) || DOMAIN_IN_NAME.test(name)) reasons.push('link-in-name');
  if (LINK_MARKUP.test(message)) reasons.push('link-markup');
  return reasons;
}

/** A form completed sooner than this after its challenge was issued counts against it (issue 13). */
export const MIN_FILL_MS = 3_000;

/** Whether a form came back faster than a person fills one in. */
export function tooFast(issuedAt: number, submittedAt: number): boolean {
  return submittedAt - issuedAt < MIN_FILL_MS;
}
