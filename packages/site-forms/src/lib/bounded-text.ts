/**
 * The most an outside service's answer may hold: a subscription or a spam verdict is a few
 * kilobytes; more is a broken or hostile server, whose answer would otherwise be buffered
 * whole for as long as the call's deadline allows (gigabytes from a fast one).
 */
export const OUTSIDE_ANSWER_MAX_BYTES = 1_048_576;

/** The error `readBoundedText` throws for an answer past its limit. */
export class AnswerTooLargeError extends Error {
  readonly code = 'ETOOLARGE';
  constructor(maxBytes: number) {
    super(`The answer is larger than ${maxBytes} bytes`);
    this.name = 'AnswerTooLargeError';
  }
}

/**
 * Reads a fetch answer's body as UTF-8 text, stopping (and closing the connection) as soon as
 * it passes `maxBytes`; throws `AnswerTooLargeError` then, and whatever the stream throws.
 */
export async function readBoundedText(response: Response, maxBytes = OUTSIDE_ANSWER_MAX_BYTES): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new AnswerTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
