/**
 * Your site: its name, its words and its look. Change what you like, then `npm run build`
 * (or `npm start`) again. A mistake stops the build with the setting's name.
 * The README's "Make it yours" section says what each setting changes.
 */
import { defineSite } from 'site-forms/config';

export default defineSite({
  // In the header, the footer, every tab title and the subject of each mail you get.
  name: 'Our Newsletter',
  // For search results and link previews of the home page. Left out: a sentence in the site's language.
  // description: 'Furniture from the north, made to order.',
  // The language of every text a visitor reads (pages, forms, messages, their mails): 'en' or 'de'.
  // English answers exactly as docs/api/openapi.yaml says; the README's "Make it yours" says what another changes.
  language: 'en',
  // The display name of the mail the site sends you ("Our Newsletter <forms@example.org>").
  senderName: 'Our Newsletter',
  // The time zone of the times in the "CSV for Excel" export, an IANA name such as 'Europe/Vienna'.
  timeZone: 'UTC',
  // What a subscriber agrees to: shown under the newsletter form and kept with each consent record.
  // Left out: the site's language's ("I would like to receive the newsletter by email. I can
  // unsubscribe at any time." or its German), so that changing `language` changes it too.
  // newsletterConsent: 'I would like to get your newsletter by email and can unsubscribe at any time.',
  // Colours replacing the defaults of src/styles/global.css, for example
  // light: { accent: '#7a1fa2', 'accent-strong': '#5e1780' }, dark: { accent: '#e1b3f5' }.
  // Keep text readable: 4.5:1 against its background (the defaults say what they meet).
  theme: { light: {}, dark: {} },
});
