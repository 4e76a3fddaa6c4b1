import type { APIRoute } from 'astro';
import { methodNotAllowed } from '../../lib/http.ts';
import { handleNewsletter } from '../../lib/newsletter/handle.ts';
import { services } from '../../lib/services.ts';

export const prerender = false;

export const POST: APIRoute = ({ request }) => handleNewsletter(request, services());
export const ALL: APIRoute = () => methodNotAllowed(['POST']);
