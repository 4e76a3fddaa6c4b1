/**
 * A secret as it may be logged: its last four characters when it is long enough that they
 * give nothing away (enough to tell two keys apart), else nothing.
 */
export function mask(secret: string): string {
  return secret.length > 8 ? `…${secret.slice(-4)}` : '***';
}

/**
 * A URL as it may be logged: user name and password replaced by `***`, since some services
 * use a token as the user name (Postmark's SMTP), and nothing at all when it does not parse.
 */
export function withoutCredentials(url: string): string {
  if (!URL.canParse(url)) return '***';
  const u = new URL(url);
  // Returned as written when there is nothing to hide: toString() would add a trailing slash.
  if (!u.username && !u.password) return url;
  if (u.username) u.username = '***';
  if (u.password) u.password = '***';
  return u.toString();
}
