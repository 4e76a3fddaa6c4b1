import { describe, expect, test } from 'vitest';
import { startupFailureLine } from '../../packages/site-forms/src/lib/startup-failure.ts';

const LISTEN = { step: 'listen', host: '127.0.0.1', port: 4321 } as const;
const DATABASE = { step: 'database', dataDir: '/srv/site/data' } as const;

function systemError(code: string, message = `${code}: something`): Error {
  return Object.assign(new Error(message), { code });
}

function sqliteError(errcode: number, errstr: string): Error {
  return Object.assign(new Error(errstr), { code: 'ERR_SQLITE_ERROR', errcode, errstr });
}

describe('one line for each start-up failure, naming what to change', () => {
  test.each([
    [
      'the port is in use',
      systemError('EADDRINUSE'),
      LISTEN,
      'PORT 4321 is already in use on 127.0.0.1: stop what listens there, or set PORT to another port.',
    ],
    [
      'a privileged port',
      systemError('EACCES'),
      { ...LISTEN, port: 80 },
      'PORT 80 needs privileges this user lacks (ports below 1024 do): set PORT above 1023 and put nginx or Caddy in front.',
    ],
    [
      'an address of another machine',
      systemError('EADDRNOTAVAIL'),
      { ...LISTEN, host: '10.9.9.9' },
      'HOST 10.9.9.9 is not an address of this machine: set HOST to one of its addresses, such as 127.0.0.1.',
    ],
    [
      'a host name that does not resolve',
      systemError('ENOTFOUND'),
      { ...LISTEN, host: 'nowhere.invalid' },
      'HOST nowhere.invalid is not a name this machine can resolve: set HOST to an address, such as 127.0.0.1.',
    ],
    [
      'a resolver that is down',
      systemError('EAI_AGAIN'),
      { ...LISTEN, host: 'site.internal' },
      'HOST site.internal is not a name this machine can resolve: set HOST to an address, such as 127.0.0.1.',
    ],
    ['any other listen failure: its first line', new Error('boom\n    at x (y.js:1:1)'), LISTEN, 'Could not listen on 127.0.0.1 port 4321 (HOST, PORT): boom'],
    [
      'a folder the user may not create',
      systemError('EACCES'),
      DATABASE,
      'DATA_DIR /srv/site/data cannot be written by this user: make it writable, or set DATA_DIR to a folder that is.',
    ],
    [
      'an operation not permitted',
      systemError('EPERM'),
      DATABASE,
      'DATA_DIR /srv/site/data cannot be written by this user: make it writable, or set DATA_DIR to a folder that is.',
    ],
    [
      'a read-only file system',
      systemError('EROFS'),
      DATABASE,
      'DATA_DIR /srv/site/data cannot be written by this user: make it writable, or set DATA_DIR to a folder that is.',
    ],
    [
      'SQLite cannot open the file',
      sqliteError(14, 'unable to open database file'),
      DATABASE,
      'DATA_DIR /srv/site/data cannot be written by this user: make it writable, or set DATA_DIR to a folder that is.',
    ],
    [
      'a read-only database file',
      sqliteError(8, 'attempt to write a readonly database'),
      DATABASE,
      'DATA_DIR /srv/site/data cannot be written by this user: make it writable, or set DATA_DIR to a folder that is.',
    ],
    ['a file where the folder should be', systemError('ENOTDIR'), DATABASE, 'DATA_DIR /srv/site/data is not a folder: set DATA_DIR to a folder.'],
    ['a file of that name already there', systemError('EEXIST'), DATABASE, 'DATA_DIR /srv/site/data is not a folder: set DATA_DIR to a folder.'],
    ['a full disk', systemError('ENOSPC'), DATABASE, 'DATA_DIR /srv/site/data is on a full disk: free some space.'],
    [
      'a file that is not a database',
      sqliteError(26, 'file is not a database'),
      DATABASE,
      'DATA_DIR /srv/site/data holds a forms.db that is not a readable SQLite database: restore it from a backup, or move it away.',
    ],
    [
      'a corrupt database',
      sqliteError(11, 'database disk image is malformed'),
      DATABASE,
      'DATA_DIR /srv/site/data holds a forms.db that is not a readable SQLite database: restore it from a backup, or move it away.',
    ],
    [
      'any other database failure: its first line',
      sqliteError(1, 'no such table: x'),
      DATABASE,
      'DATA_DIR /srv/site/data: the database could not be opened: no such table: x',
    ],
    [
      'a failure whose first line has spaces around it: trimmed',
      sqliteError(1, '  no such table: x  \n  at prepare'),
      DATABASE,
      'DATA_DIR /srv/site/data: the database could not be opened: no such table: x',
    ],
    ['something thrown that is no Error', 'weird', DATABASE, 'DATA_DIR /srv/site/data: the database could not be opened: weird'],
    ['null thrown', null, LISTEN, 'Could not listen on 127.0.0.1 port 4321 (HOST, PORT): null'],
  ])('%s', (_, error, at, line) => {
    expect(startupFailureLine(error, at)).toBe(line);
  });
});
