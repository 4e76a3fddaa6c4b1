/** Domains whose mailboxes ignore dots in the local part, each with the one it stands for. */
const DOTLESS_DOMAINS: Readonly<Record<string, string>> = { 'gmail.com': 'gmail.com', 'googlemail.com': 'gmail.com' };

/**
 * The mailbox an address reaches, for counting: lower case, a `+tag` cut off at every domain,
 * and at Gmail (`googlemail.com` too) the dots dropped, so `B.o.m.b+1@googlemail.com` is
 * `bomb@gmail.com` (decision 0141). Never an address to send to: only a key.
 */
export function mailboxOf(email: string): string {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1).toLowerCase();
  let local = email.slice(0, at).toLowerCase();
  // A local part that is only a tag (`+a@…`) stays itself: there is nothing to cut it from.
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  const dotless = DOTLESS_DOMAINS[domain];
  return dotless ? `${local.replaceAll('.', '')}@${dotless}` : `${local}@${domain}`;
}
