// The cursors of /api/v1's lists (issue 42): where the next page starts, as the last row of this
// one named it, so a page is found by an index and a row added meanwhile never shifts a page.
// Decision 0282.

/** A moment as every table keeps it: ISO 8601 in UTC with milliseconds (`toISOString()`). */
const MOMENT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The last message of a page: its `created_at` and its id (the order is `created_at DESC, id DESC`). */
export type MessageCursor = { c: string; i: number };

/** The last subscriber of a page: its `created_at` and its address (the order is `created_at DESC, email DESC`). */
export type SubscriberCursor = { c: string; e: string };

/** A cursor's text: base64url of its JSON, opaque to programs. */
export function encodeCursor(cursor: MessageCursor | SubscriberCursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

/** A message cursor a program sent back, or `undefined` when it is not one this server wrote (a 400). */
export function decodeMessageCursor(text: string): MessageCursor | undefined {
  const value = parse(text);
  if (!value || typeof value.c !== 'string' || !MOMENT.test(value.c)) return undefined;
  if (typeof value.i !== 'number' || !Number.isSafeInteger(value.i) || value.i < 1) return undefined;
  return { c: value.c, i: value.i };
}

/** A subscriber cursor a program sent back, or `undefined` when it is not one this server wrote (a 400). */
export function decodeSubscriberCursor(text: string): SubscriberCursor | undefined {
  const value = parse(text);
  if (!value || typeof value.c !== 'string' || !MOMENT.test(value.c)) return undefined;
  if (typeof value.e !== 'string' || value.e === '' || value.e.length > 320) return undefined;
  return { c: value.c, e: value.e };
}

function parse(text: string): Record<string, unknown> | undefined {
  if (!/^[A-Za-z0-9_-]{1,600}$/.test(text)) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
