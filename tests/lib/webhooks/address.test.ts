import { describe, expect, test } from 'vitest';
import { isPrivateAddress } from '../../../src/lib/webhooks/address.ts';

describe('the addresses a webhook may not reach unless WEBHOOK_ALLOW_PRIVATE', () => {
  test.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.31.255.255', true],
    ['192.168.0.10', true],
    ['100.64.0.1', true],
    ['169.254.169.254', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['::1', true],
    ['::', true],
    ['fd12:3456::1', true],
    ['fe80::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['64:ff9b::a9fe:a9fe', true],
    ['not an address', true],
    ['93.184.216.34', false],
    ['172.32.0.1', false],
    ['2606:4700:4700::1111', false],
    ['::ffff:93.184.216.34', false],
  ])('%s: private %s', (address, isPrivate) => {
    expect(isPrivateAddress(address)).toBe(isPrivate);
  });
});
