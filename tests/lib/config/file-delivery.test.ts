import { describe, expect, test } from 'vitest';
import { fileDelivery } from '../../../packages/site-forms/src/lib/config/file-delivery.ts';

describe('the configuration of how files reach the owner', () => {
  test('unset: 10 MB of attachments a mail, links open for 7 days', () => {
    expect(fileDelivery.read({})).toEqual({ config: { fileDelivery: { mailAttachMaxBytes: 10_485_760, linkLifetimeSeconds: 604_800 } }, problems: [] });
  });

  test('set: both read as whole numbers; 0 attaches nothing', () => {
    expect(fileDelivery.read({ MAIL_ATTACH_MAX_BYTES: '0', FILE_LINK_LIFETIME_SECONDS: '3600' }).config).toEqual({
      fileDelivery: { mailAttachMaxBytes: 0, linkLifetimeSeconds: 3600 },
    });
  });

  test.each([
    ['MAIL_ATTACH_MAX_BYTES', '10MB'],
    ['MAIL_ATTACH_MAX_BYTES', '-1'],
    ['FILE_LINK_LIFETIME_SECONDS', '0'],
    ['FILE_LINK_LIFETIME_SECONDS', '99999999999'],
  ])('%s=%s is refused, naming the variable', (name, value) => {
    const { problems } = fileDelivery.read({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]!.startsWith(`${name} `)).toBe(true);
  });
});
