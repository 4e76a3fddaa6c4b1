/**
 * "Request a quote": a form of the owner's own, defined once. Copy this file to
 * src/forms/quote.form.ts and list it in forms.config.ts (README.md beside this file).
 */
import { defineForm } from 'site-forms/config';

export default defineForm({
  // Its endpoint is /api/forms/quote; its thank-you page /thank-you/quote/.
  name: 'quote',
  title: 'Request a quote',
  submitLabel: 'Ask for a quote',
  busyLabel: 'Sending...',
  thanks: 'Thank you! We will send you a quote within two working days.',
  fields: [
    { name: 'name', type: 'text', label: 'Name', required: true, minLength: 2, maxLength: 100, autocomplete: 'name' },
    { name: 'email', type: 'email', label: 'Email address', required: true, autocomplete: 'email' },
    {
      name: 'topic',
      type: 'select',
      label: 'What is it for?',
      required: true,
      choices: [
        { value: 'table', label: 'A table' },
        { value: 'chairs', label: 'Chairs' },
        { value: 'shelves', label: 'Shelves' },
        { value: 'other', label: 'Something else' },
      ],
      messages: { required: 'Please choose what the quote is for', invalid: 'Please choose what the quote is for' },
    },
    {
      name: 'budget',
      type: 'number',
      label: 'Budget in euros',
      hint: 'A rough figure is fine.',
      min: 100,
      max: 100000,
      messages: {
        invalid: 'Budget must be a number of euros',
        tooSmall: 'Our work starts at 100 euros',
        tooLarge: 'Please call us for budgets above 100,000 euros',
      },
    },
    {
      name: 'details',
      type: 'textarea',
      label: 'Details',
      hint: 'Sizes, wood, colours, when you need it.',
      required: true,
      minLength: 10,
      maxLength: 3000,
      rows: 6,
    },
    {
      name: 'consent',
      type: 'checkbox',
      label: 'You may keep my details to prepare the quote.',
      required: true,
      messages: { required: 'We need your agreement to prepare a quote' },
    },
  ],
  // Its own budget: at most 3 accepted quotes per visitor an hour (RATE_LIMIT_MAX is the default).
  limit: { max: 3, windowSeconds: 3600 },
});
