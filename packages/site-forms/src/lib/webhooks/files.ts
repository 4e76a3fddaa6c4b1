import type { FileRecords } from '../files/files.ts';
import type { FileLinks } from '../files/links.ts';
import type { SiteEvent } from './events.ts';

/** One file of a message as webhooks and chat alerts carry it: never its bytes, a signed link to them. */
export type EventFile = { name: string; size: number; type: string; url: string };

/**
 * The event with its message's files, when it has any: per file its name, size, type and a link
 * signed now (FILE_LINK_LIFETIME_SECONDS from this try), absolute from `origin` (PUBLIC_URL; the
 * path alone without it). Newsletter events and messages without files are left as they are.
 * Hint: signed at each try, not when the event was recorded, so a delivery retried for a day
 * still carries a link that opens; the bytes never go into a payload.
 */
export async function eventFiles(
  event: SiteEvent,
  { records, links, origin }: { records: Pick<FileRecords, 'filesOf'>; links: Pick<FileLinks, 'sign'>; origin: string },
): Promise<SiteEvent> {
  const id = event.data.id;
  if (!event.type.startsWith('contact.') || typeof id !== 'number') return event;
  const stored = await records.filesOf(id);
  if (stored.length === 0) return event;
  const files: EventFile[] = [];
  for (const file of stored) files.push({ name: file.name, size: file.size, type: file.type, url: `${origin}${await links.sign(file.id)}` });
  return { ...event, data: { ...event.data, files } };
}
