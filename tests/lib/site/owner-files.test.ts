import { describe, expect, test } from 'vitest';

// The one place the suite reads the owner's own site.config.ts and forms.config.ts (every other
// test reads tests/fixtures/test.*.config.ts, decision 0144): whatever they say, they are valid,
// as `npm run build` will need them. A mistake in either throws naming the setting.
describe("the owner's own settings and forms", () => {
  test('site.config.ts is a valid site: a name and one of the languages', async () => {
    const { default: site } = await import('../../../site.config.ts');
    expect(site.name).toMatch(/\S/);
    expect(['en', 'de']).toContain(site.language);
  });

  test('forms.config.ts is valid: the contact form keeps its own fields first, each form has a name', async () => {
    const { default: forms } = await import('../../../forms.config.ts');
    expect(forms.contact.fields.slice(0, 3).map((field) => field.name)).toEqual(['name', 'email', 'message']);
    for (const form of forms.forms) expect(form.name).toMatch(/^[a-z][a-z0-9-]*$/);
  });
});
