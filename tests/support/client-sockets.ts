import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { once } from 'node:events';
import type { Socket } from 'node:net';

/** The client sockets this process opened since `watchClientSockets`, and a wait for their end. */
export type ClientSockets = {
  /** How many were opened so far. */
  readonly count: number;
  /**
   * Settles once every socket opened so far has closed, and the event loop has turned once
   * more: an error a socket was to raise has then been raised (Node emits `error` before `close`),
   * so a test that expects none can stop waiting on the event itself, not on a guessed time.
   */
  closed(): Promise<void>;
  stop(): void;
};

/** Watches the client sockets this process opens (Node's `net.client.socket` channel: undici, node:http, superagent alike). */
export function watchClientSockets(): ClientSockets {
  const sockets: Socket[] = [];
  const onSocket = (message: unknown) => sockets.push((message as { socket: Socket }).socket);
  subscribe('net.client.socket', onSocket);
  return {
    get count() {
      return sockets.length;
    },
    async closed() {
      await Promise.all(sockets.map((socket) => (socket.closed ? undefined : once(socket, 'close'))));
      await new Promise((resolve) => setImmediate(resolve));
    },
    stop: () => unsubscribe('net.client.socket', onSocket),
  };
}
