/**
 * Whole page bodies, as the starter's own pages use them (`site-forms/pages`): the contact page, the
 * newsletter's home page, the page of an address that does not exist, a form's own page.
 * Hint: apart from `site-forms/components`, because NotFound renders in our Base layout, whose
 * stylesheet (the starter's look, global.css) would otherwise come with every owner's page that
 * places a form (decision 0220).
 */
export { default as ContactPage } from '../components/ContactPage.astro';
export { default as NewsletterPage } from '../components/NewsletterPage.astro';
export { default as NotFound } from '../components/NotFound.astro';
/** The page of one of the owner's forms of forms.config.ts: `<FormPage form="quote" />` (docs/examples/quote/). */
export { default as FormPage } from '../components/FormPage.astro';
