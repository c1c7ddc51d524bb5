import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/** How long a connection being closed goes on reading, and discarding, what its client still sends. */
export const LINGER_MS = 2_000;

const lingering = new WeakSet<Duplex>();

/**
 * Ends the connection (after `lastBytes`, if given) and reads and discards what the client still
 * sends for at most `lingerMs`, then destroys it, as nginx's lingering close does. A socket
 * destroyed with bytes unread makes the kernel reset the connection: a client still sending
 * its request then meets ECONNRESET or EPIPE, often before it has read the answer sent to it.
 * The connection closes sooner when the client ends its side.
 */
export function endLingering(socket: Duplex, lingerMs: number, lastBytes?: string): void {
  if (lingering.has(socket)) return;
  lingering.add(socket);
  socket.end(lastBytes);
  // Not paused by anyone: unread bytes would stop the client as surely as a reset.
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * Makes every close of the server's connections a lingering one, also those Node's HTTP server
 * makes itself: after an answer with `Connection: close` (a body refused unread), it calls the
 * socket's `destroySoon()`, which would destroy the socket as soon as the answer is written.
 * A parse error is answered with `answerParseError(code)`, the raw bytes of a whole response.
 * Requests refused this way close their connection, as their framing is not to be trusted.
 */
export function closeConnectionsLingering(
  server: Server,
  lingerMs: number,
  answerParseError: (code: string | undefined) => string,
): void {
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = () => endLingering(socket, lingerMs);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // Node's parser reports an error again for every piece a lingering connection still receives.
    if (lingering.has(socket)) return;
    // As Node's default handler: no answer once a response is under way on this connection.
    const inFlight = (socket as { _httpMessage?: ServerResponse })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    endLingering(socket, lingerMs, answerParseError(error.code));
  });
}
