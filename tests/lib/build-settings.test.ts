import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtEndpointOrigin, readBuildSettings } from '../../packages/site-forms/src/lib/build-settings.ts';

// What the server learns from dist/build-settings.json: the endpoint the pages' script was built
// to post to, which the Content-Security-Policy has to allow.
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'build-settings-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function settingsFile(text: string): URL {
  const file = join(dir, 'build-settings.json');
  writeFileSync(file, text);
  return pathToFileURL(file);
}

describe('readBuildSettings', () => {
  it('answers undefined for a build made before the file existed', () => {
    expect(readBuildSettings(pathToFileURL(join(dir, 'build-settings.json')))).toBeUndefined();
  });

  it('reads the endpoint the build put into the pages', () => {
    expect(readBuildSettings(settingsFile('{ "contactFormEndpoint": "https://forms.example.com/api/contact" }'))).toEqual({
      contactFormEndpoint: 'https://forms.example.com/api/contact',
    });
  });

  it('reads a build with no endpoint of its own, an empty one or one of another type as "this site"', () => {
    expect(readBuildSettings(settingsFile('{ "contactFormEndpoint": null }'))).toEqual({ contactFormEndpoint: null });
    expect(readBuildSettings(settingsFile('{ "contactFormEndpoint": "" }'))).toEqual({ contactFormEndpoint: null });
    expect(readBuildSettings(settingsFile('{ "contactFormEndpoint": 42 }'))).toEqual({ contactFormEndpoint: null });
    expect(readBuildSettings(settingsFile('{}'))).toEqual({ contactFormEndpoint: null });
  });
});

describe('builtEndpointOrigin', () => {
  it('is the origin of another site the script posts to', () => {
    expect(builtEndpointOrigin({ contactFormEndpoint: 'https://forms.example.com/api/contact' })).toBe('https://forms.example.com');
    expect(builtEndpointOrigin({ contactFormEndpoint: 'http://127.0.0.1:4321/api/contact' })).toBe('http://127.0.0.1:4321');
  });

  it('is undefined for this site, a malformed value or a scheme a browser would not post to', () => {
    expect(builtEndpointOrigin({ contactFormEndpoint: null })).toBeUndefined();
    expect(builtEndpointOrigin({ contactFormEndpoint: '/api/contact' })).toBeUndefined();
    expect(builtEndpointOrigin({ contactFormEndpoint: 'javascript:alert(1)' })).toBeUndefined();
    expect(builtEndpointOrigin({ contactFormEndpoint: 'ftp://forms.example.com/api/contact' })).toBeUndefined();
  });
});
