import type { Answer } from '../http/outcome.ts';
import type { AdminRefusalView, AdminShownView } from './admin-route.ts';
import type { FormView } from './form-view.ts';

/** An answer for the server to write as it is: JSON, a redirect, a download. */
export type AnswerReply = Answer & { kind: 'answer' };

/**
 * What the pipeline gives back, said by its `kind` (decision 0187): an answer to write
 * (`answer`), or a page for Astro to render with the view in `locals`: a form's page again
 * after a refused post (`form-view`), a refused admin post (`admin-refusal`) or a value an admin
 * post shows once (`admin-shown`).
 * Hint: each consumer (src/server/dispatch.ts, src/integration/middleware.ts) switches on
 * `kind` with `satisfies never`, so a new kind cannot be left without a road.
 */
export type Reply = AnswerReply | FormView | AdminRefusalView | AdminShownView;

/** An answer as the pipeline's reply. */
export function answerReply(answer: Answer): AnswerReply {
  return { kind: 'answer', ...answer };
}
