/** What the server was doing when start-up failed: opening its data, or listening. */
export type StartupStep = { step: 'database'; dataDir: string } | { step: 'listen'; host: string; port: number };

// SQLite's result codes (https://sqlite.org/rescode.html) that an owner can act on.
const SQLITE_READONLY = 8;
const SQLITE_CORRUPT = 11;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;

/**
 * The one line a site owner reads when start-up fails: what is wrong, the variable, port or
 * path to change, and how; never a stack trace.
 * Hint: unknown failures keep only the first line of their message.
 */
export function startupFailureLine(error: unknown, at: StartupStep): string {
  const { code, errcode } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; errcode?: unknown };
  return at.step === 'listen' ? listenFailure(code, at, error) : databaseFailure(code, errcode, at.dataDir, error);
}

function listenFailure(code: unknown, { host, port }: { host: string; port: number }, error: unknown): string {
  switch (code) {
    case 'EADDRINUSE':
      return `PORT ${port} is already in use on ${host}: stop what listens there, or set PORT to another port.`;
    case 'EACCES':
      return `PORT ${port} needs privileges this user lacks (ports below 1024 do): set PORT above 1023 and put nginx or Caddy in front.`;
    case 'EADDRNOTAVAIL':
      return `HOST ${host} is not an address of this machine: set HOST to one of its addresses, such as 127.0.0.1.`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `HOST ${host} is not a name this machine can resolve: set HOST to an address, such as 127.0.0.1.`;
    default:
      return `Could not listen on ${host} port ${port} (HOST, PORT): ${firstLine(error)}`;
  }
}

function databaseFailure(code: unknown, errcode: unknown, dataDir: string, error: unknown): string {
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || errcode === SQLITE_READONLY || errcode === SQLITE_CANTOPEN) {
    return `DATA_DIR ${dataDir} cannot be written by this user: make it writable, or set DATA_DIR to a folder that is.`;
  }
  if (code === 'ENOTDIR' || code === 'EEXIST') return `DATA_DIR ${dataDir} is not a folder: set DATA_DIR to a folder.`;
  if (code === 'ENOSPC') return `DATA_DIR ${dataDir} is on a full disk: free some space.`;
  if (errcode === SQLITE_NOTADB || errcode === SQLITE_CORRUPT) {
    return `DATA_DIR ${dataDir} holds a forms.db that is not a readable SQLite database: restore it from a backup, or move it away.`;
  }
  return `DATA_DIR ${dataDir}: the database could not be opened: ${firstLine(error)}`;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n', 1)[0]!.trim();
}
