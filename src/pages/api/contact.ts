import type { APIRoute } from 'astro';
import { handleContact } from '../../lib/contact/handle.ts';
import { methodNotAllowed } from '../../lib/http.ts';
import { isDocumentNavigation } from '../../lib/navigation.ts';
import { services } from '../../lib/services.ts';
import { answerVisitor, VISITOR_PAGES } from '../../lib/visitor-answer.ts';

export const prerender = false;

const handle = (request: Request) => handleContact(request, services());

// The script, curl and tests get the JSON of SPEC.md; a browser posting the form itself gets pages.
export const POST: APIRoute = (context) =>
  isDocumentNavigation(context.request) ? answerVisitor(context, VISITOR_PAGES.contact, handle) : handle(context.request);
export const ALL: APIRoute = () => methodNotAllowed(['POST']);
