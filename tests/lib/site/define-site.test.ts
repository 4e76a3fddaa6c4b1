import { describe, expect, test } from 'vitest';
import { defineSite, themeStylesheet } from '../../../packages/site-forms/src/lib/site/define-site.ts';
import { site, siteForMail } from '../../../packages/site-forms/src/lib/site/site.ts';

/** The owner's colours as /theme.css serves them, and the site the owner's mail names. */
describe('the stylesheet of the owner’s colours', () => {
  test('keeping every default: no stylesheet at all', () => {
    expect(themeStylesheet({ light: {}, dark: {} })).toBe('');
    expect(themeStylesheet(defineSite({ name: 'Atelier Nord', theme: { light: { accent: undefined } } }).theme)).toBe('');
  });

  test('light colours only: one rule that outweighs global.css, one declaration per line, in the order given', () => {
    expect(themeStylesheet({ light: { accent: '#7a1fa2', 'accent-strong': '#5e1780' }, dark: {} })).toBe(
      ':root:root {\n  --accent: #7a1fa2;\n  --accent-strong: #5e1780;\n}\n',
    );
  });

  test('dark colours only: the rule inside the dark scheme’s media query', () => {
    expect(themeStylesheet({ light: {}, dark: { accent: '#e1b3f5', radius: '0' } })).toBe(
      '@media (prefers-color-scheme: dark) {\n  :root:root {\n    --accent: #e1b3f5;\n    --radius: 0;\n  }\n}\n',
    );
  });

  test('both: the light rule first, then the dark one', () => {
    const { theme } = defineSite({ name: 'Atelier Nord', theme: { light: { text: ' #111 ' }, dark: { text: '#eee' } } });
    expect(themeStylesheet(theme)).toBe(':root:root {\n  --text: #111;\n}\n@media (prefers-color-scheme: dark) {\n  :root:root {\n    --text: #eee;\n  }\n}\n');
  });
});

describe('the site the owner’s mail comes from', () => {
  test('with the admin and PUBLIC_URL: the admin’s links are absolute', () => {
    expect(siteForMail({ admin: { passwordHash: 'x' }, publicUrl: 'https://forms.example.org' })).toEqual({
      name: site.name,
      senderName: site.senderName,
      adminOrigin: 'https://forms.example.org',
      timeZone: site.timeZone,
    });
  });

  test('with the admin and no PUBLIC_URL: the admin’s path alone', () => {
    expect(siteForMail({ admin: { passwordHash: 'x' }, publicUrl: undefined })).toEqual({
      name: site.name,
      senderName: site.senderName,
      adminOrigin: '',
      timeZone: site.timeZone,
    });
  });

  test('without the admin: no link to it, PUBLIC_URL or not', () => {
    expect(siteForMail({ admin: undefined, publicUrl: 'https://forms.example.org' })).toEqual({
      name: site.name,
      senderName: site.senderName,
      adminOrigin: undefined,
      timeZone: site.timeZone,
    });
  });
});

describe('the site’s time zone', () => {
  test('UTC unless set', () => {
    expect(defineSite({ name: 'Atelier Nord' }).timeZone).toBe('UTC');
  });

  test('an IANA zone is kept as written', () => {
    expect(defineSite({ name: 'Atelier Nord', timeZone: 'Europe/Vienna' }).timeZone).toBe('Europe/Vienna');
  });

  test.each(['Europe/Wien', 'CET+1', '', 'Mars/Olympus_Mons'])('%j stops the build naming the setting', (timeZone) => {
    expect(() => defineSite({ name: 'Atelier Nord', timeZone })).toThrow(/^site\.config\.ts: timeZone is not a time zone/);
  });
});
