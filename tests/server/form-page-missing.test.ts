import { afterAll, expect, test } from 'vitest';
import { buildOwnerSite } from '../support/build-site.ts';

// An owner's form names the page that places it (`page`, `/<name>` unless given); a build of a
// form whose page does not exist stops, naming the form and the page, rather than shipping a
// form whose "start again" links lead to a 404 (issue 30, item 4).
const NAME = `form-page-missing-${process.pid}`;
let remove: (() => void) | undefined;

afterAll(() => remove?.());

test('a build of an owner form whose page does not exist fails naming the form and the page', () => {
  const forms = `import { defineForms } from 'site-forms/config';
export default defineForms({
  contactFields: [],
  forms: [{ name: 'booking', title: 'Book a visit', page: '/visit', fields: [{ name: 'email', type: 'email', label: 'Email', required: true }] }],
});
`;
  let failure = '';
  try {
    remove = buildOwnerSite(NAME, { 'forms.config.ts': forms }).remove;
  } catch (error) {
    failure = String((error as Error).message);
  }
  expect(failure).toContain('form "booking" names the page /visit, and no page of src/pages is /visit');
}, 240_000);
