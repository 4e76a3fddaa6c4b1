import type { APIRoute } from 'astro';
import { failure } from '../../lib/http.ts';

export const prerender = false;

/** Any other address under /api answers in JSON like the endpoints do. */
export const ALL: APIRoute = () => failure(404, 'Not found');
