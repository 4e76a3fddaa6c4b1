import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One message as the SMTP server accepted it: the envelope and the raw bytes of DATA. */
export type ReceivedMail = { from: string; to: string[]; raw: string; user: string | undefined };

/** How the server answers the DATA of one attempt (numbered from 1): accept, or an SMTP error reply; late, if it is a promise. */
export type SmtpAnswer = 'accept' | { code: number; message: string };

/** A real SMTP server on 127.0.0.1 standing in for the site owner's mail provider. */
export type FakeSmtpServer = {
  port: number;
  /** An SMTP_URL for this server, with credentials when given. */
  url(credentials?: { user: string; pass: string }): string;
  /** Every message accepted, in order. */
  received: ReceivedMail[];
  /** Every message a client sent to DATA, accepted or refused, in order. */
  offered: ReceivedMail[];
  /** How many times a client reached DATA, accepted or not. */
  attempts(): number;
  /** The answer to every following attempt, until changed. */
  answer(decide: (attempt: number) => SmtpAnswer | Promise<SmtpAnswer>): void;
  close(): Promise<void>;
};

/** A certificate for the server: offered with STARTTLS (`secure: false`), or TLS from the first byte (`secure: true`, smtps). */
export type SmtpTlsOptions = { key: string; cert: string; secure: boolean };

/**
 * Starts an SMTP server that records what it receives.
 * Hint: without `tls`, STARTTLS is off so the client speaks plain text, and AUTH is accepted
 * over it only when `credentials` are given (then they are required).
 */
export async function startSmtpServer(
  options: {
    port?: number;
    answer?: (attempt: number) => SmtpAnswer | Promise<SmtpAnswer>;
    credentials?: { user: string; pass: string };
    tls?: SmtpTlsOptions;
    /** Recipients refused at RCPT TO (550) while the others are taken: a mailbox that does not exist. */
    refuseRecipient?: (address: string) => boolean;
  } = {},
): Promise<FakeSmtpServer> {
  let decide: (attempt: number) => SmtpAnswer | Promise<SmtpAnswer> = options.answer ?? (() => 'accept');
  let attempts = 0;
  const received: ReceivedMail[] = [];
  const offered: ReceivedMail[] = [];
  const server = new SMTPServer({
    logger: false,
    disabledCommands: [...(options.tls ? [] : ['STARTTLS']), ...(options.credentials ? [] : ['AUTH'])],
    ...(options.tls ? { secure: options.tls.secure, key: options.tls.key, cert: options.tls.cert } : {}),
    authOptional: !options.credentials,
    allowInsecureAuth: true,
    closeTimeout: 200,
    onAuth(auth, _session, callback) {
      const ok = auth.username === options.credentials?.user && auth.password === options.credentials?.pass;
      if (ok) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      if (options.refuseRecipient?.(address.address)) callback(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        attempts += 1;
        const mail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: typeof session.user === 'string' ? session.user : undefined,
        };
        offered.push(mail);
        const answer = await decide(attempts);
        if (answer !== 'accept') {
          callback(Object.assign(new Error(answer.message), { responseCode: answer.code }));
          return;
        }
        received.push(mail);
        callback();
      });
    },
  });
  // A client that refuses our certificate hangs up mid-handshake; that is the test, not a crash.
  server.on('error', () => {});
  const port = await new Promise<number>((resolve, reject) => {
    const net = server.listen(options.port ?? 0, '127.0.0.1', () => resolve((net.address() as AddressInfo).port));
    net.once('error', reject);
  });
  return {
    port,
    url: (credentials) =>
      `${options.tls?.secure ? 'smtps' : 'smtp'}://${credentials ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass)}@` : ''}127.0.0.1:${port}`,
    received,
    offered,
    attempts: () => attempts,
    answer(next) {
      decide = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A server that accepts connections and never says a word: an SMTP server hung before its greeting. */
export async function startSilentServer(): Promise<{ port: number; connections(): number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port of 127.0.0.1 where nothing listens (it was free a moment ago). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Waits until `condition` answers a value other than `undefined`/`false`, or fails after `timeoutMs`, naming what was awaited. */
export async function eventually<T>(what: string, condition: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
