import { describe, expect, test } from 'vitest';
import { AnswerTooLargeError, readBoundedText } from '../../packages/site-forms/src/lib/bounded-text.ts';

/** An answer whose body arrives in the given chunks, and whether the reader cancelled it. */
function answer(chunks: Array<string | Uint8Array>) {
  const seen = { cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) controller.close();
      else controller.enqueue(typeof next === 'string' ? new TextEncoder().encode(next) : next);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { response: new Response(body), seen };
}

describe('reading an outside answer within a limit', () => {
  test('by default an answer of 1 MiB is read, and one a byte longer is not', async () => {
    await expect(readBoundedText(answer(['x'.repeat(1_048_576)]).response)).resolves.toHaveLength(1_048_576);
    await expect(readBoundedText(answer(['x'.repeat(1_048_577)]).response)).rejects.toBeInstanceOf(AnswerTooLargeError);
  });

  test.each([
    ['in one chunk', ['{"ok":true}'], 11, '{"ok":true}'],
    ['in several chunks, exactly at the limit', ['abc', 'de', 'fgh'], 8, 'abcdefgh'],
    ['with a character cut between two chunks', [Uint8Array.of(0x63, 0x61, 0x66, 0xc3), Uint8Array.of(0xa9, 0x21)], 6, 'café!'],
    ['empty', [], 8, ''],
  ] as Array<[string, Array<string | Uint8Array>, number, string]>)('a body %s is read whole', async (_, chunks, limit, text) => {
    await expect(readBoundedText(answer(chunks).response, limit)).resolves.toBe(text);
  });

  test('one byte past the limit: AnswerTooLargeError, and the rest is not read', async () => {
    const { response, seen } = answer(['abcd', 'efghi', 'never read']);
    const error = await readBoundedText(response, 8).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnswerTooLargeError);
    expect(error).toMatchObject({ name: 'AnswerTooLargeError', code: 'ETOOLARGE', message: 'The answer is larger than 8 bytes' });
    expect(seen.cancelled).toBe(true);
  });

  test('an answer without a body is empty', async () => {
    await expect(readBoundedText(new Response(null, { status: 204 }))).resolves.toBe('');
  });
});
