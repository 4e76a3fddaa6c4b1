import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * The README's own step, "language: 'de'", on the site.config.ts a new owner gets: the file may
 * write no text of the catalogue's in English, or a German site would show it (issue 28, item 4).
 * Hint: the test changes only the language of the shipped file and expects what the German
 * catalogue says, whatever name the owner has given their site.
 */
describe('the shipped site.config.ts', () => {
  test('with only its language changed to German, its description and consent are German', async () => {
    const shipped = readFileSync(new URL('../../../site.config.ts', import.meta.url), 'utf8');
    const settings = new URL('../../../src/lib/site/settings.ts', import.meta.url).pathname;
    const german = shipped.replace(/language: 'en'/, "language: 'de'").replace("'./src/lib/site/settings.ts'", JSON.stringify(settings));
    expect(german).toContain("language: 'de'");
    const dir = mkdtempSync(join(tmpdir(), 'site-config-de-'));
    try {
      writeFileSync(join(dir, 'site.config.ts'), german);
      const { default: site } = (await import(join(dir, 'site.config.ts'))) as { default: { name: string; description: string; newsletterConsent: string } };
      expect(site.newsletterConsent).toBe('Ich möchte den Newsletter per E-Mail erhalten. Ich kann ihn jederzeit abbestellen.');
      expect(site.description).toBe(`${site.name}: Neuigkeiten und ein Weg, uns zu erreichen.`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
