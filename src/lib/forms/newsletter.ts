import * as v from 'valibot';
import { EmailField } from './email.ts';

/** The newsletter form of docs/api/openapi.yaml: one email address. */
export const NewsletterSchema = v.object({
  email: EmailField,
});

/** A validated newsletter subscription. */
export type NewsletterInput = v.InferOutput<typeof NewsletterSchema>;
