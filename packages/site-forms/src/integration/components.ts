/** The forms an owner places on their own pages (`site-forms/components`): `<ContactForm />`, `<NewsletterForm />`, `<Form name="quote" />`. */
export { default as ContactForm } from '../components/ContactForm.astro';
export { default as NewsletterForm } from '../components/NewsletterForm.astro';
export { default as Form } from '../components/NamedForm.astro';
/** Whole page bodies, as the starter's own pages use them: the contact page, the newsletter's home page, the page of an address that does not exist. */
export { default as ContactPage } from '../components/ContactPage.astro';
export { default as NewsletterPage } from '../components/NewsletterPage.astro';
export { default as NotFound } from '../components/NotFound.astro';
