import { createHmac } from 'node:crypto';

/**
 * The headers of one delivery attempt by the Standard Webhooks specification (v1): the event's
 * id (the same on every retry), the attempt's time in Unix seconds, and one `v1,<signature>` per
 * secret, space-separated, so that a receiver in the middle of a rotation accepts either.
 * Hint: the signature is the base64 HMAC-SHA256, keyed with the secret's bytes after `whsec_`,
 * of `<id>.<timestamp>.<body>`, the body exactly as sent.
 */
export function signedHeaders(id: string, timestampSeconds: number, body: string, secrets: readonly string[]): Record<string, string> {
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': signatures.join(' ') };
}

/** The key of a `whsec_<base64>` secret: the bytes the base64 stands for. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.slice('whsec_'.length), 'base64');
}

/** Whether a secret is one Standard Webhooks libraries take: `whsec_` and base64 of 24 to 64 bytes. */
export function isWebhookSecret(secret: string): boolean {
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret)) return false;
  const length = secretKey(secret).length;
  return length >= 24 && length <= 64;
}
