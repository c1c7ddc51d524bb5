import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  /** Path and query, e.g. `/exports/prefix/file.parquet`. */
  url: string;
}

type Match = (request: ProxiedRequest) => boolean;

/** What the proxy does to the next matching requests instead of passing them on. */
export type ProxyFault =
  { kind: 'hold' } | { kind: 'answer'; status: number; code: string; message: string } | { kind: 'drop' };

interface ArmedFault {
  fault: ProxyFault;
  match: Match;
  remaining: number;
}

export interface ObjstoreProxy {
  url: string;
  /** The next `count` matching requests get the fault (`hold` keeps them waiting until `release`). */
  arm(fault: ProxyFault, match: Match, count?: number): void;
  /** Requests being held. */
  held(): ProxiedRequest[];
  /** Passes the held requests on, and stops holding. */
  release(): void;
  close(): Promise<void>;
}

/** A PUT of an exported Parquet file. */
export const parquetUpload: Match = (request) => request.method === 'PUT' && /\.parquet(\?|$)/.test(request.url);

/**
 * A pass-through HTTP proxy in front of the real objstore, for tests that need the store to
 * stall, answer an error or drop the connection at a chosen request. Requests keep their
 * headers (the Host the client signed included), so the store checks their signatures as usual.
 */
export async function startObjstoreProxy(objstoreUrl: string): Promise<ObjstoreProxy> {
  const upstream = new URL(objstoreUrl);
  let faults: ArmedFault[] = [];
  const holding: { request: ProxiedRequest; pass: () => void }[] = [];

  const pass = (req: http.IncomingMessage, res: http.ServerResponse) => {
    // `Expect` is never signed: answer it here and send the body on at once.
    const { expect: _expect, ...headers } = req.headers;
    const forwarded = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  };

  const server = http.createServer((req, res) => {
    const request = { method: req.method!, url: req.url! };
    const armed = faults.find((candidate) => candidate.match(request));
    if (!armed) return pass(req, res);
    if (--armed.remaining === 0) faults = faults.filter((candidate) => candidate !== armed);
    const { fault } = armed;
    if (fault.kind === 'hold') {
      holding.push({ request, pass: () => pass(req, res) });
    } else if (fault.kind === 'drop') {
      req.socket.destroy();
    } else {
      req.resume();
      res.writeHead(fault.status, { 'content-type': 'application/xml' });
      res.end(
        `<?xml version="1.0" ` +
          `encoding="UTF-8"?><Error><Code>${fault.code}</Code><Message>${fault.message}</Message></Error>`,
      );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    arm: (fault, match, count = 1) => faults.push({ fault, match, remaining: count }),
    held: () => holding.map((entry) => entry.request),
    release: () => {
      faults = faults.filter((candidate) => candidate.fault.kind !== 'hold');
      for (const entry of holding.splice(0)) entry.pass();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
