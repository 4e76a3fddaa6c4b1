import { de } from './de.ts';
import { type Catalogue, en } from './en.ts';

/** Each language's texts, by the code of `<html lang>` (BCP 47). */
const CATALOGUES = { en, de } as const satisfies Record<string, Catalogue>;

/** The languages the site's texts exist in: `language` in site.config.ts is one of them. */
export const LANGUAGES = Object.keys(CATALOGUES) as readonly Language[];

/** One of the languages. */
export type Language = keyof typeof CATALOGUES;

/** The texts of a language. */
export function catalogueFor(language: Language): Catalogue {
  return CATALOGUES[language];
}

export type { Catalogue };
