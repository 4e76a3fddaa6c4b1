import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * The README's own step, "language: 'de'", on the site.config.ts a new owner gets: the file may
 * write no text of the catalogue's in English, or a German site would show it (issue 28, item 4).
 * Hint: the test changes only the language of the file and expects what the German catalogue
 * says of each text the file leaves out, whatever name the owner has given their site; a text
 * the owner wrote in (a customised copy, scripts/customised-copy.sh) stays as written.
 */
describe('the shipped site.config.ts', () => {
  test('with only its language changed to German, its description and consent are German', async () => {
    const shipped = readFileSync(new URL('../../../site.config.ts', import.meta.url), 'utf8');
    const settings = new URL('../../../packages/site-forms/src/lib/site/define-site.ts', import.meta.url).pathname;
    const german = shipped.replace(/language: 'en'/, "language: 'de'").replace("'site-forms/config'", JSON.stringify(settings));
    expect(german).toContain("language: 'de'");
    const dir = mkdtempSync(join(tmpdir(), 'site-config-de-'));
    try {
      writeFileSync(join(dir, 'site.config.ts'), german);
      const { default: site } = (await import(join(dir, 'site.config.ts'))) as { default: { name: string; description: string; newsletterConsent: string } };
      // A text the file writes is the owner's and stays as written; one it leaves out follows the language.
      const writes = (key: string) => new RegExp(`^\\s*${key}\\s*:`, 'm').test(shipped);
      const germanDefaults = {
        newsletterConsent: 'Ich möchte den Newsletter per E-Mail erhalten. Ich kann ihn jederzeit abbestellen.',
        description: `${site.name}: Neuigkeiten und ein Weg, uns zu erreichen.`,
      };
      // A copy of the English default written into the file would pin it in English (the defect of issue 28).
      const englishDefaults = {
        newsletterConsent: 'I would like to receive the newsletter by email. I can unsubscribe at any time.',
        description: `${site.name}: news and a way to reach us.`,
      };
      for (const key of ['newsletterConsent', 'description'] as const) {
        if (writes(key)) expect(site[key], `site.config.ts writes the English default of ${key}`).not.toBe(englishDefaults[key]);
        else expect(site[key]).toBe(germanDefaults[key]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
