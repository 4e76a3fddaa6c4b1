import type { APIRoute } from 'astro';
import { handleContact } from '../../lib/contact/handle.ts';
import { methodNotAllowed } from '../../lib/http.ts';
import { services } from '../../lib/services.ts';

export const prerender = false;

export const POST: APIRoute = ({ request }) => handleContact(request, services());
export const ALL: APIRoute = () => methodNotAllowed(['POST']);
