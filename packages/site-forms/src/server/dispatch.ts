import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BodyReader, IncomingRequest } from '../lib/http/form.ts';
import { type Answer, failure, methodNotAllowed, renderJson } from '../lib/http/outcome.ts';
import { texts } from '../lib/i18n/texts.ts';
import { bodyLimitOf, refuseDeclared } from '../lib/pipeline/body-limit.ts';
import { runPipeline } from '../lib/pipeline/pipeline.ts';
import { findTarget, loggedPath, pathOf } from '../lib/pipeline/routes.ts';
import { describeError } from '../lib/log.ts';
import type { Services } from '../lib/app/services.ts';
import type { Front } from './front.ts';
import type { ArrivalLimit, FastPath, NodeHandler } from './http-server.ts';

/**
 * Astro's side: renders a page for a request, with the request's context as the page's
 * `Astro.locals` (the services, and the form's or the admin's view to show). The adapter's
 * handler in production, Astro's dev server under `npm run dev`.
 */
export type AstroHandler = (req: IncomingMessage, res: ServerResponse, locals: App.Locals) => void | Promise<void>;

/** The methods a Web `Request` can carry; TRACE, CONNECT and the unknown ones cannot. */
const WEB_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Sends each request down its road (decision 0040): the front first (a request addressed
 * to another site is refused, decision 0060); a method no page or route takes (pages take
 * only GET and HEAD) is a JSON 405; the built files come from memory; a route or a near miss goes through the
 * pipeline, whose form pages Astro renders; everything else is Astro's. The same dispatcher
 * serves `npm run dev` (src/server/dev.ts), so both answer alike.
 */
export function createDispatcher({
  services,
  front,
  staticFiles,
  astro,
  limitArrival,
}: {
  services: Services;
  front: Front;
  staticFiles: FastPath;
  astro: AstroHandler;
  /** Our own server's per-request time limit (src/server/http-server.ts); `npm run dev` has none. */
  limitArrival?: ArrivalLimit | undefined;
}): NodeHandler {
  // One error line for an answer that cannot be finished: the client then sees a cut connection, the log why.
  const failed = (req: IncomingMessage, error: unknown) =>
    services.logger.error('server.answer_failed', { path: loggedPath(pathOf(req.url ?? '/')), error: describeError(error) });
  // Too late for an answer (it may be half-written).
  const cut = (req: IncomingMessage, res: ServerResponse, error: unknown) => {
    failed(req, error);
    res.destroy();
  };
  // Our own answers carry the security headers in their one writeHead; others' get them set first.
  const send = (req: IncomingMessage, res: ServerResponse, answer: Answer) => {
    if (answer.stream) return void stream(res, answer, answer.stream, front.headersWith(answer.headers), (error) => failed(req, error));
    sendWhole(front, res, answer);
  };
  // A page takes no body: one declared past a form's limit is refused from the header, by the pipeline's own rule.
  const pageLimit = bodyLimitOf({}, services.config.uploads);
  const astroDressed: AstroHandler = (req, res, locals) => {
    front.dress(res);
    return astro(req, res, locals);
  };
  return (req, res) => {
    // The route is found once: for the time limit (only a post with files gets the long one) and for the answer.
    const target = findTarget(req.url ?? '/');
    limitArrival?.(req, res, req.method === 'POST' && target.kind === 'route' && target.route.files === true);
    if (front.check(req, res)) return;
    // Pages are only read: a post or a PATCH to one would get the page and a 200, which says "done".
    if (!WEB_METHODS.has(req.method ?? '') || (target.kind === 'elsewhere' && req.method !== 'GET' && req.method !== 'HEAD')) {
      closeUnlessRead(req, res, false);
      send(req, res, renderJson(methodNotAllowed(target.kind === 'route' ? Object.keys(target.route.methods) : ['GET', 'HEAD'])));
      return discardBriefly(req);
    }
    if (target.kind === 'elsewhere') {
      const tooLarge = refuseDeclared(req.headers['content-length'], pageLimit);
      if (!tooLarge) {
        front.dress(res);
        if (staticFiles(req, res)) return;
        return void render(astro, req, res, { services }).catch((error: unknown) => cut(req, res, error));
      }
      // Answered from the header: no need to wait for a body that may never come.
      closeUnlessRead(req, res, false);
      send(req, res, renderJson(tooLarge));
      return discardBriefly(req);
    }
    const body = nodeBody(req);
    const request = toWebRequest(req, body);
    if (!request) return send(req, res, renderJson(failure(400, texts.refusals.badRequest)));
    void runPipeline({ request, target, socketAddress: req.socket.remoteAddress ?? '', services })
      .then((reply) => {
        closeUnlessRead(req, res, body.asked);
        switch (reply.kind) {
          case 'answer':
            return send(req, res, reply);
          case 'form-view':
            return astroDressed(req, res, { services, formView: reply });
          case 'admin-refusal':
            return astroDressed(req, res, { services, adminRefusal: reply });
          case 'admin-shown':
            return astroDressed(req, res, { services, adminShown: reply });
          default:
            return reply satisfies never;
        }
      })
      .then(() => {
        // A body refused before it was read whole (too large by its header, another site's, over
        // budget, a file past its limit): thrown away within a bound, on a connection that then closes.
        discardBriefly(req);
      })
      .catch((error: unknown) => cut(req, res, error));
  };
}

/** Astro's rendering as a promise: a handler that throws, at once or later, rejects it. */
async function render(astro: AstroHandler, req: IncomingMessage, res: ServerResponse, locals: App.Locals): Promise<void> {
  await astro(req, res, locals);
}

/**
 * The request as the pipeline reads it (`IncomingRequest`): its method, URL and Web headers,
 * its body left in the Node stream, which `readForm` reads from there when a handler asks
 * (`readBody`), with the size limit, without a Web stream between. Neither a Web `Request`
 * (its AbortSignal and second copy of the headers) nor undici's stream over the Node stream is built.
 * Hint: the URL is the Host and the path as sent, so that `//api/x` stays a path and
 * never becomes a host; the Host only decides what "same origin" means, never reflected.
 */
function toWebRequest(req: IncomingMessage, body: NodeBody): IncomingRequest | undefined {
  const headers = new Headers();
  const raw = req.rawHeaders;
  try {
    for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
    const path = req.url?.startsWith('/') ? req.url : '/';
    const host = req.headers.host ?? 'localhost';
    const url = `http://${host}${path}`;
    // What `new Request` would refuse (a Host that makes no URL) is refused here too; a path
    // after "/" never makes a URL fail, so each Host is checked once.
    if (!goodHosts.has(host)) {
      if (!URL.canParse(url)) return undefined;
      if (goodHosts.size >= 100) goodHosts.clear();
      goodHosts.add(host);
    }
    const bodyless = req.method === 'GET' || req.method === 'HEAD';
    return { method: req.method ?? 'GET', url, headers, readBody: bodyless ? undefined : body.read, stream: bodyless ? undefined : body.stream };
  } catch {
    return undefined;
  }
}

/** The Hosts seen to make a URL (the site's own names, mostly); forgotten all at once past 100. */
const goodHosts = new Set<string>();

/** The Node request's body as the pipeline may take it: read whole (`read`) or as a stream (`stream`); `asked` once either was. */
type NodeBody = { read: BodyReader; stream: () => IncomingMessage; asked: boolean };

/**
 * Reads the Node request's body once, into one buffer, up to `limit` bytes: past it, the rest
 * is read and thrown away within a bound (as for a declared length past the limit) while the
 * 413 is answered. A body that breaks off is unreadable. A second read gets the first's answer.
 */
function nodeBody(req: IncomingMessage): NodeBody {
  let read: ReturnType<BodyReader> | undefined;
  const body: NodeBody = {
    asked: false,
    stream: () => {
      body.asked = true;
      return req;
    },
    read: (limit) => {
      body.asked = true;
      read ??= readNodeBody(req, limit);
      return read;
    },
  };
  return body;
}

function readNodeBody(req: IncomingMessage, limit: number): ReturnType<BodyReader> {
  return new Promise((resolve) => {
    if (req.readableEnded) return resolve(new Uint8Array());
    const chunks: Buffer<ArrayBuffer>[] = [];
    let size = 0;
    const done = (body: Awaited<ReturnType<BodyReader>>) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onBroken);
      req.off('close', onBroken);
      resolve(body);
    };
    const onData = (chunk: Buffer<ArrayBuffer>) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      done('too-large');
      discardBriefly(req);
    };
    const onEnd = () => done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    const onBroken = () => done('unreadable');
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onBroken);
    req.on('close', onBroken);
  });
}

/** Writes an answer in one go, with its length and the security headers. */
function sendWhole(front: Front, res: ServerResponse, answer: Answer): void {
  if (answer.status !== 204) answer.headers['content-length'] = String(answer.body === null ? 0 : Buffer.byteLength(answer.body));
  res.writeHead(answer.status, front.headersWith(answer.headers));
  res.end(answer.body ?? undefined);
}

/**
 * Writes a body as it is read, chunked, waiting for the socket to drain before the next chunk:
 * a slow client holds one chunk in memory, not the whole export. A client that goes away ends
 * the reading (the iterator's `return`, which lets go of what it holds).
 */
async function stream(
  res: ServerResponse,
  answer: Answer,
  chunks: AsyncIterable<string | Uint8Array>,
  headers: string[],
  failed: (error: unknown) => void,
): Promise<void> {
  res.writeHead(answer.status, headers);
  const iterator = chunks[Symbol.asyncIterator]();
  try {
    for (;;) {
      if (res.destroyed) return;
      const { done, value } = await iterator.next();
      if (done) break;
      if (!res.write(value))
        await new Promise<void>((resolve) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.on('drain', go);
          res.on('close', go);
        });
    }
    res.end();
  } catch (error) {
    // A failure half-way cannot become an error page any more: the client sees a cut answer, the log why.
    failed(error);
    res.destroy();
  } finally {
    await iterator.return?.();
  }
}

/**
 * Answers with `Connection: close` when the request's body will not be read whole: a reader took
 * it and stopped (`taken`), or it is longer than `discardBriefly` reads away (or of no declared
 * length). The socket is then cut, so a client must not send its next request on it; with
 * keep-alive it did, and that request met the cut (issue 39 item 19).
 */
function closeUnlessRead(req: IncomingMessage, res: ServerResponse, taken: boolean): void {
  if (req.complete || res.headersSent) return;
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return;
  // A body no reader took, of a declared length `discardBriefly` reads whole: read away, and the
  // connection kept; closing it would cut a client still sending it (a `fetch` then fails with EPIPE).
  if (!taken && Number(length) <= DISCARD_LIMIT.bytes) return;
  res.shouldKeepAlive = false;
  // Node would destroy the socket as soon as the answer is written, resetting a client still
  // sending before it reads the answer: the answer's end is sent (FIN) and the socket is cut
  // only by `discardBriefly`'s bound, or by the client closing it.
  const socket = req.socket;
  socket.destroySoon = () => {
    socket.end();
    setTimeout(() => socket.destroy(), DISCARD_LIMIT.ms).unref();
  };
}

/** How much of a refused body is read and thrown away, and for how long, before the socket is cut. */
const DISCARD_LIMIT = { bytes: 1024 * 1024, ms: 1000 };

/**
 * Reads and throws away what a refused client is still sending, within a bound: closing
 * at once would make a client that is mid-upload fail with a broken pipe before it reads
 * the 413; a client that sends more, or too slowly, is cut off.
 */
function discardBriefly(req: IncomingMessage): void {
  if (req.complete || discarding.has(req)) return;
  discarding.add(req);
  let received = 0;
  const cut = () => req.socket.destroy();
  const timer = setTimeout(cut, DISCARD_LIMIT.ms);
  req.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > DISCARD_LIMIT.bytes) cut();
  });
  req.once('close', () => clearTimeout(timer));
  // A reader that stopped (the upload's, at a file past its limit) left the request paused.
  req.resume();
}

/** The requests whose rest is being thrown away: asked twice, they are cut by one bound, not two. */
const discarding = new WeakSet<IncomingMessage>();
