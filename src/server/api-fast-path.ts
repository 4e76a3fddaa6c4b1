import type { IncomingMessage, ServerResponse } from 'node:http';
import { guardApi } from '../lib/api/guard.ts';
import { routeApi } from '../lib/api/routes.ts';
import { failure } from '../lib/http.ts';
import { isDocumentNavigation } from '../lib/navigation.ts';
import type { Services } from '../lib/services.ts';

/**
 * Answers `/api/*` straight from the handlers of src/lib, without Astro's rendering
 * pipeline: the same guard, the same routes, the same answers, at about twice the speed
 * (docs/performance.md). Returns false for what Astro must answer: everything outside
 * `/api/`, and browser navigations, which get pages rendered by Astro.
 */
export function createApiFastPath(services: Services): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (!req.url?.startsWith('/api/')) return false;
    const request = toWebRequest(req);
    if (!request) {
      void send(res, failure(400, 'Bad request'));
      return true;
    }
    if (isDocumentNavigation(request)) return false;
    void guardApi({ request, socketAddress: req.socket.remoteAddress ?? '', services, route: () => routeApi(request, services) })
      .then((response) => send(res, response))
      .catch(() => res.destroy());
    return true;
  };
}

function toWebRequest(req: IncomingMessage): Request | undefined {
  const headers = new Headers();
  const raw = req.rawHeaders;
  try {
    for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
    // The Host header only decides what "same origin" means here; it is never reflected.
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    return new Request(url, {
      method: req.method,
      headers,
      // undici reads a Node stream as an async iterable; the handlers count its bytes.
      body: hasBody ? (req as unknown as ReadableStream) : undefined,
      duplex: 'half',
    } as RequestInit);
  } catch {
    return undefined;
  }
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string> = { 'content-length': String(body.length) };
  for (const [name, value] of response.headers) headers[name] = value;
  res.writeHead(response.status, headers);
  res.end(body);
}
