import { createServer, STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { getRequestListener, RequestError } from '@hono/node-server';
import { closeConnectionsLingering, endLingering, LINGER_MS } from './lingering-close.ts';
import { printableError } from './log-text.ts';

/** What the real service's server (uvicorn) says of a request it cannot parse. */
const UNPARSABLE_REQUEST = 'Invalid HTTP request received.';

function jsonReply(detail: string) {
  const body = JSON.stringify({ detail });
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
    },
  };
}

/** A whole response, for a socket that no request object owns (the request could not be parsed). */
function rawReply(status: number, detail: string): string {
  const { body, headers } = jsonReply(detail);
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`;
}

function replyOnResponse(response: ServerResponse, status: number, detail: string): void {
  const { body, headers } = jsonReply(detail);
  response.writeHead(status, headers).end(body);
}

/** The status and detail for an error of Node's HTTP parser (the codes its own default answer tells apart). */
export function parserErrorReply(code: string | undefined): [status: number, detail: string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large'];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, 'Content Too Large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout'];
    default:
      return [400, UNPARSABLE_REQUEST];
  }
}

/**
 * Serves a fetch handler over HTTP/1.1 so that every reply is JSON with a `detail`, also
 * for requests refused below the app: by Node's parser (a head over 16 KiB, a malformed
 * request line, an unknown method, a duplicate Content-Length ...), by @hono/node-server
 * (targets it cannot turn into a URL: `*`, a backslash, a bad Host), a missing Host,
 * CONNECT, an unknown Expect. Those replies close the connection, as the request's framing is not
 * to be trusted; every close lingers for `lingerMs` (see lingering-close.ts).
 */
export function listenHttp(
  fetch: (request: Request) => Response | Promise<Response>,
  {
    host,
    port,
    log,
    lingerMs = LINGER_MS,
  }: { host: string; port: number; log: (line: string) => void; lingerMs?: number },
): Promise<Server> {
  const listener = getRequestListener(fetch, {
    hostname: host,
    errorHandler: (error) => {
      if (error instanceof RequestError) {
        const { body, headers } = jsonReply(`${UNPARSABLE_REQUEST} ${error.message}.`);
        return new Response(body, { status: 400, headers });
      }
      log(`internal error: ${printableError(error)}`);
      const { body, headers } = jsonReply('Internal Server Error');
      return new Response(body, { status: 500, headers });
    },
  });
  // Node's own check of Host answers an empty 400; this one answers in JSON (HTTP/1.0 needs no Host).
  const server = createServer({ requireHostHeader: false }, (request, response) => {
    if (request.headers.host === undefined && request.httpVersion !== '1.0') {
      replyOnResponse(response, 400, `${UNPARSABLE_REQUEST} Missing host header.`);
      return;
    }
    // The listener answers its own failures (errorHandler); were that to fail, the request is logged as an internal
    // error and its connection dropped.
    listener(request, response).catch((error: unknown) => {
      log(`internal error: ${printableError(error)}`);
      response.destroy();
    });
  });
  // A client may end its side of the connection once its request is sent (HTTP/1.1 allows it):
  // Node then drops the reply of a request still being answered, one waiting on files say.
  // Half-open, the connection closes after that reply.
  (server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true;
  closeConnectionsLingering(server, lingerMs, (code) => rawReply(...parserErrorReply(code)));
  server.on('connect', (_request, socket: Duplex) =>
    endLingering(socket, lingerMs, rawReply(400, `${UNPARSABLE_REQUEST} CONNECT is not supported.`)),
  );
  // Node answers an Expect header other than 100-continue itself, with an empty 417.
  server.on('checkExpectation', (_request, response: ServerResponse) =>
    replyOnResponse(response, 417, 'Expectation Failed'),
  );
  return new Promise((resolveServer, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolveServer(server);
    });
  });
}

/** A listen failure in words that name the server and the port. */
export function listenFailure(server: string, host: string, port: number, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'EADDRINUSE') return new Error(`the ${server} port ${port} on ${host} is already in use`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new Error(`cannot listen on ${host}: it is not an address of this machine`);
  return error;
}
