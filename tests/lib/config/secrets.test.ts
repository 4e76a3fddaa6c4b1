import { describe, expect, test } from 'vitest';
import { mask, withoutCredentials } from '../../../packages/site-forms/src/lib/config/secrets.ts';

describe('masking secrets for the log', () => {
  test.each([
    ['a long key keeps its last four characters', '0123456789abcdef-us21', '…us21'],
    ['a key of nine characters keeps its last four', '123456789', '…6789'],
    ['a key of eight characters shows nothing', '12345678', '***'],
    ['an empty key shows nothing', '', '***'],
  ])('%s', (_, secret, shown) => {
    expect(mask(secret)).toBe(shown);
  });

  test.each([
    [
      'hides user name and password (Postmark uses its token as the user)',
      'smtp://pm-token-9f8e:hunter2@smtp.postmarkapp.com:587',
      'smtp://***:***@smtp.postmarkapp.com:587',
    ],
    ['hides a user name without a password', 'smtp://pm-token-9f8e@mail.example.com', 'smtp://***@mail.example.com'],
    ['hides a password without a user name', 'redis://:hunter2@cache:6379', 'redis://:***@cache:6379'],
    ['leaves a URL without credentials as written', 'https://api.resend.com', 'https://api.resend.com'],
    ['shows nothing of a URL that does not parse', 'smtp://pm-token-9f8e:hunter2@[mail', '***'],
  ])('%s', (_, url, shown) => {
    expect(withoutCredentials(url)).toBe(shown);
  });
});
