import { authorize } from '../../access/permissions.ts';
import type { FormDefinition } from '../../forms/definition.ts';
import { contactForm, ownerForms } from '../../forms/registry.ts';
import type { IncomingRequest } from '../../http/form.ts';
import type { Outcome } from '../../http/outcome.ts';
import type { V1Context, V1Services } from './shared.ts';

// GET /api/v1/forms (issue 42): the site's forms a key may read, with their fields, so a program
// knows what a message's `fields` hold. Decision 0282.

/** What a program is told of a form. */
export function formInfo(form: FormDefinition) {
  return {
    name: form.name,
    title: form.title,
    page: form.page,
    fields: form.fields.map((field) => ({
      name: field.name,
      type: field.type,
      label: field.label,
      required: field.required === true,
      ...(field.choices && { choices: field.choices.map(({ value, label }) => ({ value, label })) }),
    })),
  };
}

export function listForms(_request: IncomingRequest, _services: V1Services, { actor }: V1Context): Outcome {
  const forms = [contactForm, ...ownerForms].filter((form) => authorize(actor, 'messages.read', { form: form.name }) === 'allow');
  return { kind: 'data', status: 200, body: { success: true, forms: forms.map(formInfo) } };
}
