import { texts } from '../i18n/texts.ts';

/** What a visitor typed into the visible fields of a form, shown again on a refusal; never the honeypot. */
export type FormValues = Record<string, string>;

/** The request was done, or durably stored: 200 for a script, 303 to the thanks for a person. */
export type Accepted = {
  kind: 'accepted';
  /** Another thank-you page than the form's own ("check your inbox" for a double opt-in). */
  thanks?: string;
  /** The address is on the list only once the confirmation mail's link is followed (double opt-in); told to scripts. */
  awaitingConfirmation?: true;
};

/** Fields were refused: each field's messages, and what was typed so a person need not type it again. */
export type Invalid = { kind: 'invalid'; errors: Record<string, readonly string[]>; values: FormValues };

/**
 * The request was not done: its status, the one error a visitor reads, headers a client
 * must still get (`Retry-After`, `Allow`), and for a form the values and the field the
 * error is about.
 */
export type Failure = {
  kind: 'failure';
  status: number;
  error: string;
  headers?: Record<string, string> | undefined;
  /** A word for programs to switch on (the REST API's `ApiFailure`: `invalid_key`, `rate_limited`…), sent beside `error`. */
  code?: string | undefined;
  /** The field the error belongs to, shown at that field on a page (the newsletter's email). */
  field?: string | undefined;
  values?: FormValues | undefined;
};

/**
 * A person without JavaScript is asked to confirm a message stored as held (no proof that a
 * browser's script ran): the page shows what they sent and one button, carrying `token`.
 * Hint: only a page is ever asked; for a script this is the spec's `200 {"success": true}`.
 */
export type Confirm = { kind: 'confirm'; token: string; values: FormValues };

/** A JSON body of its own (health), with `success` as every answer of the API has. */
export type Data = { kind: 'data'; status: number; body: { success: boolean } & Record<string, unknown> };

/** A file to download (a signed link's): its headers, and its bytes as they are read from the storage. */
export type Download = { kind: 'download'; headers: Record<string, string>; stream: AsyncIterable<Uint8Array> };

/** What a handler returns; a renderer turns it into an answer for a script or a page for a person. */
export type Outcome = Accepted | Invalid | Failure | Confirm | Data | Download;

/** The message every unexpected failure answers with (docs/api/openapi.yaml), in the site's language. */
export const INTERNAL_ERROR = texts.refusals.internalError;

/** An accepted request. */
export function accepted(): Accepted {
  return { kind: 'accepted' };
}

/** Refused fields with the values that were typed. */
export function invalid(errors: Record<string, readonly string[] | undefined>, values: FormValues): Invalid {
  const kept: Record<string, readonly string[]> = {};
  for (const [field, messages] of Object.entries(errors)) if (messages?.length) kept[field] = messages;
  return { kind: 'invalid', errors: kept, values };
}

/** A failure with the singular `error` of docs/api/openapi.yaml */
export function failure(status: number, error: string, more: Omit<Failure, 'kind' | 'status' | 'error'> = {}): Failure {
  return { kind: 'failure', status, error, ...more };
}

/** 405 for a method a route does not take, naming the ones it does. */
export function methodNotAllowed(allowed: readonly string[]): Failure {
  return failure(405, texts.refusals.methodNotAllowed(allowed), { headers: { allow: allowed.join(', ') } });
}

/** 429 with `Retry-After` in seconds and an error that says in minutes when to try again. */
export function tooManyRequests(retryAfterSeconds: number, values?: FormValues): Failure {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return failure(429, texts.refusals.tooManyAttempts(minutes), {
    headers: { 'retry-after': String(retryAfterSeconds) },
    values,
  });
}

/** An answer ready to write: what both servers send, without a Web `Response` on the way. */
export type Answer = {
  status: number;
  headers: Record<string, string>;
  body: string | null;
  /** A body written as it is read (an export, a file), with back-pressure; `body` is then null. */
  stream?: AsyncIterable<string | Uint8Array> | undefined;
};

/** The headers of every JSON answer: JSON, and never stored by a cache (a 200 is one visitor's result). */
export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' } as const;

/** Renders an outcome as the JSON of docs/api/openapi.yaml, for scripts, curl and every other non-person caller. */
export function renderJson(outcome: Outcome): Answer {
  switch (outcome.kind) {
    case 'accepted':
      return {
        status: 200,
        headers: { ...JSON_HEADERS },
        body: outcome.awaitingConfirmation ? '{"success":true,"awaitingConfirmation":true}' : '{"success":true}',
      };
    case 'confirm':
      return { status: 200, headers: { ...JSON_HEADERS }, body: '{"success":true}' };
    case 'invalid':
      return { status: 400, headers: { ...JSON_HEADERS }, body: JSON.stringify({ success: false, errors: outcome.errors }) };
    case 'failure':
      return {
        status: outcome.status,
        headers: { ...JSON_HEADERS, ...outcome.headers },
        body: JSON.stringify({ success: false, error: outcome.error, ...(outcome.code !== undefined && { code: outcome.code }) }),
      };
    case 'data':
      return { status: outcome.status, headers: { ...JSON_HEADERS }, body: JSON.stringify(outcome.body) };
    case 'download':
      return { status: 200, headers: { ...outcome.headers }, body: null, stream: outcome.stream };
  }
}
