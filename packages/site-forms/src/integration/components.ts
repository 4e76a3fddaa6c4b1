/** The forms an owner places on their own pages (`site-forms/components`): `<ContactForm />`, `<NewsletterForm />`, `<Form name="quote" />`. */
export { default as ContactForm } from '../components/ContactForm.astro';
export { default as NewsletterForm } from '../components/NewsletterForm.astro';
export { default as Form } from '../components/NamedForm.astro';
