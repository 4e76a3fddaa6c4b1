import * as v from 'valibot';
import { catalogueFor, LANGUAGES, type Language } from '../i18n/catalogues.ts';

export { LANGUAGES };

/**
 * The CSS custom properties of src/styles/global.css an owner may set: the site's look.
 * Hint: global.css holds the defaults and says which contrast each one meets; a colour set
 * here replaces the default in its colour scheme only.
 */
export const THEME_PROPERTIES = [
  'text',
  'muted',
  'bg',
  'surface',
  'border',
  'accent',
  'accent-strong',
  'on-accent',
  'error',
  'success',
  'focus',
  'radius',
] as const;

/** One of the custom properties an owner may set. */
export type ThemeProperty = (typeof THEME_PROPERTIES)[number];

/** The owner's settings for the whole site, as site.config.ts gives them. */
export type SiteSettings = {
  /** The name visitors see in the header, the footer and every tab title, and the owner sees in each mail's subject. */
  name: string;
  /** One or two sentences about the site, for search results and link previews of its home page. */
  description: string;
  /** The language of every text a visitor reads (`<html lang>`, src/lib/i18n): `en` or `de`. */
  language: Language;
  /** The display name of the `From` of the mail the site sends the owner. */
  senderName: string;
  /** What a subscriber agrees to, shown under the newsletter form and kept with their consent record. */
  newsletterConsent: string;
  /** The IANA time zone (`Europe/Vienna`) the spreadsheet export writes its times in, with their offset; `UTC` unless set. */
  timeZone: string;
  /** Colours and sizes replacing the defaults of global.css, for the light and the dark scheme. */
  theme: { light: Partial<Record<ThemeProperty, string>>; dark: Partial<Record<ThemeProperty, string>> };
};

/** What the owner writes in site.config.ts: the name is required, the rest has defaults. */
export type SiteSettingsInput = Pick<SiteSettings, 'name'> &
  Partial<Omit<SiteSettings, 'name' | 'theme'>> & {
    theme?: Partial<SiteSettings['theme']>;
  };

// A value goes into a stylesheet as it is: no character that could end the declaration or the rule.
const cssValue = v.pipe(
  v.string(),
  v.trim(),
  v.nonEmpty('is empty'),
  v.maxLength(100, 'is longer than 100 characters'),
  v.regex(/^[^;{}<>\\]+$/, 'may not hold ; { } < > or \\'),
);
const themeScheme = v.strictObject(
  Object.fromEntries(THEME_PROPERTIES.map((name) => [name, v.optional(cssValue)])) as Record<ThemeProperty, v.OptionalSchema<typeof cssValue, undefined>>,
);
const line = (max: number) =>
  v.pipe(v.string(), v.trim(), v.nonEmpty('is empty'), v.maxLength(max, `is longer than ${max} characters`), v.regex(/^[^\r\n]*$/, 'holds a line break'));

/** Whether Intl knows `name` as a time zone by name (IANA's `Area/City`, or `UTC`); an offset such as `+01:00` has no summer time and is not one. */
export function isTimeZone(name: string): boolean {
  if (!/^[A-Za-z]/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const SiteSettingsSchema = v.strictObject({
  name: line(60),
  description: v.optional(line(300)),
  language: v.optional(v.picklist(LANGUAGES, `must be one of: ${LANGUAGES.join(', ')}`)),
  senderName: v.optional(line(60)),
  newsletterConsent: v.optional(line(300)),
  timeZone: v.optional(v.pipe(v.string(), v.check(isTimeZone, 'is not a time zone Intl knows: an IANA name such as Europe/Vienna, or UTC'))),
  theme: v.optional(v.strictObject({ light: v.optional(themeScheme), dark: v.optional(themeScheme) })),
});

/**
 * Checks the owner's settings and fills in the defaults; throws naming the setting that is
 * wrong, so that a build or a start with a broken site.config.ts stops at once.
 */
export function defineSite(input: SiteSettingsInput): SiteSettings {
  const result = v.safeParse(SiteSettingsSchema, input);
  if (!result.success) {
    const issue = result.issues[0];
    const path = v.getDotPath(issue) ?? 'settings';
    throw new Error(`site.config.ts: ${path} ${issue.message}`);
  }
  const settings = result.output;
  const language = settings.language ?? 'en';
  // The defaults a visitor reads are in the site's language.
  const texts = catalogueFor(language).site;
  return {
    name: settings.name,
    description: settings.description ?? texts.description(settings.name),
    language,
    senderName: settings.senderName ?? settings.name,
    newsletterConsent: settings.newsletterConsent ?? texts.newsletterConsent,
    timeZone: settings.timeZone ?? 'UTC',
    theme: { light: dropUnset(settings.theme?.light), dark: dropUnset(settings.theme?.dark) },
  };
}

function dropUnset(scheme: Partial<Record<ThemeProperty, string | undefined>> | undefined): Partial<Record<ThemeProperty, string>> {
  return Object.fromEntries(Object.entries(scheme ?? {}).filter(([, value]) => value !== undefined)) as Partial<Record<ThemeProperty, string>>;
}

/**
 * The stylesheet of the owner's colours (/theme.css), empty when they keep the defaults.
 * Hint: `:root:root` outweighs global.css's `:root` whichever of the two files loads last.
 */
export function themeStylesheet(theme: SiteSettings['theme']): string {
  const block = (scheme: Partial<Record<ThemeProperty, string>>, indent: string) =>
    Object.entries(scheme)
      .map(([name, value]) => `${indent}--${name}: ${value};\n`)
      .join('');
  let css = '';
  if (Object.keys(theme.light).length > 0) css += `:root:root {\n${block(theme.light, '  ')}}\n`;
  if (Object.keys(theme.dark).length > 0) {
    css += `@media (prefers-color-scheme: dark) {\n  :root:root {\n${block(theme.dark, '    ')}  }\n}\n`;
  }
  return css;
}
