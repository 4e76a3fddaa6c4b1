/**
 * What the bench's references (bench/baseline-server.ts, bench/baseline-postgres.ts) share, none of
 * it ours (it imports nothing from packages/ or src/): the API contract's rules and messages as one
 * valibot schema each, the JSON answers' headers, and a post's fields read as a person writes it by
 * hand (the body buffered, `Request.formData()`).
 */
import type { IncomingMessage } from 'node:http';
import * as v from 'valibot';

const email = v.pipe(v.string(), v.trim(), v.email('Please enter a valid email address'));
export const Contact = v.object({
  name: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(2, 'Name must be between 2 and 100 characters'),
    v.maxLength(100, 'Name must be between 2 and 100 characters'),
  ),
  email,
  message: v.pipe(
    v.string(),
    v.trim(),
    v.minLength(10, 'Message must be at least 10 characters'),
    v.maxLength(5000, 'Message must be at most 5000 characters'),
  ),
  honeypot: v.pipe(v.string(), v.maxLength(0, 'This field must be left empty')),
});
export const Newsletter = v.object({ email });
export const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

/** A post's text fields (a file's value as ''), the body read whole. */
export async function readFields(req: IncomingMessage): Promise<Record<string, string>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const form = await new Request('http://baseline/', {
    method: 'POST',
    headers: { 'content-type': req.headers['content-type'] ?? '' },
    body: Buffer.concat(chunks),
  }).formData();
  return Object.fromEntries([...form.entries()].map(([key, value]) => [key, typeof value === 'string' ? value : '']));
}
