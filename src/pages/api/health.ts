import type { APIRoute } from 'astro';
import { handleHealth } from '../../lib/health.ts';
import { methodNotAllowed } from '../../lib/http.ts';
import { services } from '../../lib/services.ts';

export const prerender = false;

export const GET: APIRoute = () => {
  const { db, provider } = services();
  return handleHealth({ db, providerName: provider.name });
};
export const ALL: APIRoute = () => methodNotAllowed(['GET']);
