import type { Language } from './catalogues.ts';

/** The locale each language's times are written in: day before month and a 24-hour clock in both. */
const LOCALES: Record<Language, string> = { en: 'en-GB', de: 'de-DE' };

const formats = new Map<string, Intl.DateTimeFormat>();

/**
 * A moment as a person reads it in a mail or a text (`28. November 2026 um 18:14 MEZ`,
 * `28 November 2026 at 17:14 UTC`): in the site's language and time zone, with the zone's name.
 * Hint: the zone is named because the owner may read it elsewhere; a time that is no date is given back as it is.
 */
export function formatTime(at: string | Date, language: Language, timeZone: string): string {
  const date = typeof at === 'string' ? new Date(at) : at;
  if (Number.isNaN(date.getTime())) return String(at);
  const key = `${language} ${timeZone}`;
  let format = formats.get(key);
  if (format === undefined) {
    format = new Intl.DateTimeFormat(LOCALES[language], {
      timeZone,
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
    });
    formats.set(key, format);
  }
  return format.format(date);
}
