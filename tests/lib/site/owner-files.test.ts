import { describe, expect, test } from 'vitest';
// Imported with the file, not inside a test: the catalogues and schemas these load are values made
// at import, which the mutation run leaves out (--ignoreStatic, docs/mutation-score.md); imported
// inside a test, they would count as reached by this test alone, which checks none of their texts.
import forms from '../../../forms.config.ts';
import site from '../../../site.config.ts';

// The one place the suite reads the owner's own site.config.ts and forms.config.ts (every other
// test reads tests/fixtures/test.*.config.ts, decision 0144): whatever they say, they are valid,
// as `npm run build` will need them. A mistake in either throws naming the setting, and this file fails.
describe("the owner's own settings and forms", () => {
  test('site.config.ts is a valid site: a name and one of the languages', () => {
    expect(site.name).toMatch(/\S/);
    expect(['en', 'de']).toContain(site.language);
  });

  test('forms.config.ts is valid: the contact form keeps its own fields first, each form has a name', () => {
    expect(forms.contact.fields.slice(0, 3).map((field) => field.name)).toEqual(['name', 'email', 'message']);
    for (const form of forms.forms) expect(form.name).toMatch(/^[a-z][a-z0-9-]*$/);
  });
});
