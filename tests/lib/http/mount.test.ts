import { describe, expect, it } from 'vitest';
import { checkBase, mountOf, ourPath, withinMount } from '../../../packages/site-forms/src/lib/http/mount.ts';

describe("the prefix of the forms' routes (siteForms({ base }), decision 0230)", () => {
  it('takes a path of plain segments, with or without its trailing slash, and none for the root', () => {
    expect(checkBase(undefined)).toBe('');
    expect(checkBase('/')).toBe('');
    expect(checkBase('/forms/')).toBe('/forms');
    expect(checkBase('/site/forms')).toBe('/site/forms');
  });

  it('refuses what is not a path of its own, naming the option', () => {
    for (const bad of ['forms', '/forms//x', '/../admin', '/fo rms', 'https://x.example/forms', '/forms?x', 3]) {
      expect(() => checkBase(bad), String(bad)).toThrow(/siteForms\(\{ base/);
    }
  });

  it("puts Astro's base before ours, however the owner wrote it", () => {
    expect(mountOf('/', '')).toBe('');
    expect(mountOf('/', '/forms')).toBe('/forms');
    expect(mountOf('/shop/', '/forms')).toBe('/shop/forms');
    expect(mountOf('shop', '')).toBe('/shop');
  });

  it('makes our paths under the mount and reads requests back from it', () => {
    expect(ourPath('/api/contact', '')).toBe('/api/contact');
    expect(ourPath('/api/contact', '/shop/forms')).toBe('/shop/forms/api/contact');
    expect(withinMount('/shop/forms/api/contact?x=1', '/shop/forms')).toBe('/api/contact?x=1');
    expect(withinMount('/shop/forms', '/shop/forms')).toBe('/');
    expect(withinMount('/api/contact', '')).toBe('/api/contact');
  });

  it("leaves the owner's paths, and a longer segment that only starts like ours, outside", () => {
    expect(withinMount('/api/contact', '/forms')).toBeUndefined();
    expect(withinMount('/formsx/api/contact', '/forms')).toBeUndefined();
    expect(withinMount('/admin', '/forms')).toBeUndefined();
  });
});
