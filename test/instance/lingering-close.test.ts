import { Agent, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';
import { listenHttp } from '../../src/shared/http-server.ts';
import { useObjstore } from '../support/objstore-server.ts';

/** Short, so that a client that never stops sending is cut off quickly. */
const LINGER_MS = 300;
/**
 * For the servers that are to answer in full: longer than any client of the test takes to send
 * its request, however busy the machine (the client and the servers share this process), so
 * that only its own end closes the connection.
 */
const PATIENT_LINGER_MS = 60_000;
const REPEATS = 200;
const MIB = 1024 * 1024;
const PIECE = 16 * 1024;

const objstores = {
  brief: useObjstore({ directoryPrefix: 'lingering-close-', keys: [], buckets: ['exports'], lingerMs: LINGER_MS }),
  patient: useObjstore({
    directoryPrefix: 'lingering-close-',
    keys: [],
    buckets: ['exports'],
    lingerMs: PATIENT_LINGER_MS,
  }),
};
let lp: InProcessLocalplane;
const apis: { brief?: Server; patient?: Server } = {};
const apiLog: string[] = [];

beforeAll(async () => {
  lp = await createLocalplane();
  const listen = (lingerMs: number) =>
    listenHttp(lp.fetch, { host: '127.0.0.1', port: 0, log: (line) => apiLog.push(line), lingerMs });
  [apis.brief, apis.patient] = await Promise.all([listen(LINGER_MS), listen(PATIENT_LINGER_MS)]);
});
afterAll(async () => {
  for (const api of [apis.brief, apis.patient]) {
    api?.closeAllConnections();
    api?.close();
  }
  await lp?.stop();
});

type Linger = keyof typeof objstores;
const apiPort = (linger: Linger) => (apis[linger]!.address() as AddressInfo).port;
const objstorePort = (linger: Linger) => Number(new URL(objstores[linger].objstore.url).port);

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The answer in what was read, once it is all there (by its Content-Length). */
function answerIn(received: Buffer): Answer | null {
  const headEnd = received.indexOf('\r\n\r\n');
  if (headEnd === -1) return null;
  const [statusLine, ...lines] = received.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const body = received.subarray(headEnd + 4);
  if (body.length < Number(headers['content-length'])) return null;
  return { status: Number(statusLine!.split(' ')[1]), headers, body: body.toString('utf8') };
}

interface Exchange {
  answer: Answer | null;
  /** The socket's error, if any (ECONNRESET, EPIPE). */
  error: string | undefined;
  /** From the whole answer read to the connection closed, in ms. */
  closedAfterAnswerMs: number;
}

/**
 * Sends the request head, then `bodyBytes` more (Infinity: until the server closes), as fast as
 * the connection takes them, reading all along; it ends its side once all is sent, and not when
 * the server ends its own (a client still busy sending).
 */
function sendWhileReading(port: number, head: string, bodyBytes: number): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const bytes = Buffer.from(head, 'latin1');
    const filler = Buffer.alloc(PIECE, 'x');
    let headSent = 0;
    let bodySent = 0;
    let received = Buffer.alloc(0);
    let answer: Answer | null = null;
    let answeredAt = 0;
    let error: string | undefined;
    const nextPiece = () => {
      if (headSent < bytes.length) return bytes.subarray(headSent, (headSent += PIECE));
      if (bodySent >= bodyBytes) return null;
      const piece = filler.subarray(0, Math.min(PIECE, bodyBytes - bodySent));
      bodySent += piece.length;
      return piece;
    };
    // A piece per turn of the event loop: still sending when the answer comes.
    const pump = () => {
      if (socket.destroyed) return;
      const piece = nextPiece();
      if (piece === null) return void socket.end();
      if (socket.write(piece)) setImmediate(pump);
      else socket.once('drain', pump);
    };
    socket.on('connect', pump);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      answer ??= answerIn(received);
      if (answer && !answeredAt) answeredAt = performance.now();
    });
    socket.on('error', (failure: NodeJS.ErrnoException) => (error = failure.code));
    socket.on('close', () => resolve({ answer, error, closedAfterAnswerMs: performance.now() - answeredAt }));
  });
}

const longUrl = `?name=${'a'.repeat(MIB)}`;
const hugeHeader = `X-Big: ${'b'.repeat(MIB)}\r\n`;

/** A browser form upload (POST Object) whose file, `fileBytes` long, is its first part: it names no key. */
function formUploadHead(fileBytes: number): string {
  const filePart = '--form\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\n';
  return (
    `POST /exports HTTP/1.1\r\nHost: localhost\r\nContent-Type: multipart/form-data; ` +
    `boundary=form\r\nContent-Length: ${filePart.length + fileBytes}\r\n\r\n${filePart}`
  );
}

/** What an answer says: the API's `detail`, the objstore's error `Code`, or nothing (an empty body). */
function gist(answer: Answer | null): string | undefined {
  if (!answer?.body) return undefined;
  return answer.body.startsWith('{') ? JSON.parse(answer.body).detail : /<Code>(\w+)<\/Code>/.exec(answer.body)?.[1];
}

interface RefusedRequest {
  what: string;
  head: string;
  bodyBytes: number;
  status: number;
  says: string | undefined;
}

const servers: [server: string, port: (linger: Linger) => number, cases: RefusedRequest[]][] = [
  [
    'API',
    apiPort,
    [
      {
        what: 'a 1 MiB URL',
        head: `GET /v2/deployments${longUrl} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
        bodyBytes: 0,
        status: 431,
        says: 'Request Header Fields Too Large',
      },
      {
        what: 'a 1 MiB header',
        head: `GET /v2/deployments HTTP/1.1\r\nHost: localhost\r\n${hugeHeader}\r\n`,
        bodyBytes: 0,
        status: 431,
        says: 'Request Header Fields Too Large',
      },
      {
        what: 'a body over 1 MiB',
        head:
          `POST /_localplane/objstore/keys HTTP/1.1\r\nHost: localhost\r\nContent-Type: ` +
          `application/json\r\nContent-Length: ${4 * MIB}\r\n\r\n`,
        bodyBytes: 4 * MIB,
        status: 413,
        says: 'Request body too large: the limit is 1048576 bytes (1 MiB)',
      },
    ],
  ],
  [
    'objstore',
    objstorePort,
    [
      {
        what: 'a 1 MiB URL',
        head: `GET /exports/key${longUrl} HTTP/1.1\r\nHost: localhost\r\n\r\n`,
        bodyBytes: 0,
        status: 431,
        says: undefined,
      },
      {
        what: 'a 1 MiB header',
        head: `GET /exports/key HTTP/1.1\r\nHost: localhost\r\n${hugeHeader}\r\n`,
        bodyBytes: 0,
        status: 431,
        says: undefined,
      },
      {
        what: 'a form upload refused before its file is read',
        head: formUploadHead(4 * MIB),
        bodyBytes: 4 * MIB,
        status: 400,
        says: 'InvalidArgument',
      },
    ],
  ],
];

describe.each(servers)('the %s answers a client still sending its request, then closes', (_server, port, cases) => {
  it.each(cases)(
    `answers $what in full ${REPEATS} times out of ${REPEATS}, never reset`,
    async ({ head, bodyBytes, status, says }) => {
      const outcomes = new Map<string, number>();
      for (let attempt = 0; attempt < REPEATS; attempt++) {
        const { answer, error } = await sendWhileReading(port('patient'), head, bodyBytes);
        const outcome = `${answer?.status} ${answer?.headers.connection} ${gist(answer)} ${error ?? 'no error'}`;
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
      expect(Object.fromEntries(outcomes)).toEqual({ [`${status} close ${says} no error`]: REPEATS });
    },
  );

  it.each(cases)(
    'closes within the linger bound a connection that goes on sending after $what',
    async ({ head, status, says }) => {
      const { answer, error, closedAfterAnswerMs } = await sendWhileReading(port('brief'), head, Infinity);
      expect([answer?.status, gist(answer)]).toEqual([status, says]);
      // Cut off at last: the bytes it sent after the end of the bound are met with a reset.
      expect(error).toMatch(/^(ECONNRESET|EPIPE)$/);
      expect(closedAfterAnswerMs).toBeGreaterThan(LINGER_MS - 50);
      expect(closedAfterAnswerMs).toBeLessThan(LINGER_MS + 1_000);
    },
  );
});

it('the API keeps serving, and keeps a good request’s connection alive', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = () =>
    new Promise<{ status: number; reusedSocket: boolean }>((resolve, reject) => {
      const request = httpRequest(
        { port: apiPort('brief'), host: '127.0.0.1', path: '/_localplane/health', agent },
        (response) => {
          response
            .resume()
            .on('end', () => resolve({ status: response.statusCode!, reusedSocket: request.reusedSocket }));
        },
      );
      request.on('error', reject).end();
    });
  try {
    expect(await get()).toEqual({ status: 200, reusedSocket: false });
    expect(await get()).toEqual({ status: 200, reusedSocket: true });
  } finally {
    agent.destroy();
  }
  expect(apiLog).toEqual([]);
});
