import { describe, expect, test } from 'vitest';
import { formViews } from '../../../src/lib/pipeline/handoff.ts';
import type { FormView } from '../../../src/lib/pipeline/page.ts';

const VIEW: FormView = { form: 'contact', status: 429, headers: {}, values: {}, errors: {}, formError: 'Too many attempts.' };

describe('the hand-over of a form’s page to Astro', () => {
  test('one store per process, whichever bundle asks', () => {
    expect(formViews()).toBe(formViews());
  });

  test('the view is seen inside the hand-over, even after an await, and nowhere else', async () => {
    const seen = await formViews().run(VIEW, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return formViews().getStore();
    });
    expect(seen).toBe(VIEW);
    expect(formViews().getStore()).toBeUndefined();
  });
});
