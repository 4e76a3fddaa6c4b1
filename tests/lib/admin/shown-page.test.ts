// @vitest-environment node
// Hint: .astro pages render only under Vitest's server transform, which the node environment uses
// (tests/scripts/markup.test.ts); the page is then read in a happy-dom Window of its own.
import { experimental_AstroContainer as AstroContainer } from 'astro/container';
import { Window } from 'happy-dom';
import { beforeAll, describe, expect, test } from 'vitest';
import Page from '../../../packages/site-forms/src/integration/pages/admin/[...rest].astro';
import { type AdminReply, renderAdminOutcome } from '../../../packages/site-forms/src/lib/pipeline/admin-route.ts';

/**
 * Issue 42 step S0b: a value an admin post shows once (an invitation link while mail is off, a
 * new API key) is a page of the admin's catch-all, never cached, with the value to copy.
 */
let container: AstroContainer;
beforeAll(async () => {
  container = await AstroContainer.create();
});

const LINK = 'https://site.test/admin/welcome/s3cr3t';

/** The locals the dispatcher hands this page, without services: no session is looked for, so no sign-out form (tests/server/admin-people.test.ts has one). */
function pageLocals(locals: Omit<App.Locals, 'services'>): App.Locals {
  return locals as App.Locals;
}

/** The reply an outcome renders to, as the page's view of that kind (what the dispatcher puts in locals). */
function viewOf<K extends AdminReply['kind']>(reply: AdminReply, kind: K): Extract<AdminReply, { kind: K }> {
  if (reply.kind !== kind) throw new Error(`expected a reply of kind ${kind}, got ${reply.kind}`);
  return reply as Extract<AdminReply, { kind: K }>;
}

describe('the page of a value shown once', () => {
  test('a 200 that no cache keeps, with the value in a field to copy and the way back', async () => {
    const adminShown = viewOf(
      renderAdminOutcome({
        kind: 'shown',
        title: 'Invitation link',
        message: 'Mail is off: give Ada this link yourself. It is shown only now.',
        value: LINK,
        back: '/admin/people',
      }),
      'admin-shown',
    );
    const response = await container.renderToResponse(Page, { locals: pageLocals({ adminShown }) });
    expect([response.status, response.headers.get('cache-control'), response.headers.get('x-robots-tag'), response.headers.get('location')]).toEqual([
      200,
      'no-store',
      'noindex, nofollow',
      null,
    ]);
    const document = new Window().document;
    document.body.innerHTML = await response.text();
    expect(document.querySelector('h1')?.textContent).toBe('Invitation link');
    const field = document.querySelector('#shown-value') as unknown as HTMLInputElement | null;
    expect([field?.value, field?.readOnly]).toEqual([LINK, true]);
    expect(document.querySelector('#shown-message')?.textContent).toBe('Mail is off: give Ada this link yourself. It is shown only now.');
    expect(document.querySelector('a[href="/admin/people"]')?.textContent).toBe('Done');
  });

  test('a refusal is still a refusal page', async () => {
    const adminRefusal = viewOf(renderAdminOutcome({ kind: 'refused', status: 403, message: 'Refused here.' }), 'admin-refusal');
    const response = await container.renderToResponse(Page, { locals: pageLocals({ adminRefusal }) });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('Refused here.');
  });
});
