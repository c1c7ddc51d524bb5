/**
 * `localplane record`: a recording proxy. Each request goes to the upstream as sent (hop-by-hop
 * headers and Host aside) and its answer comes back as sent, streamed both ways; each exchange is
 * appended to a HAR file once it ends, secrets masked (record-masking.ts), bodies bounded
 * (record-body.ts). An upstream that cannot be reached answers 502 with a `detail`, recorded too.
 */
import {
  Agent as HttpAgent,
  createServer,
  request as httpRequest,
  STATUS_CODES,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { finished } from 'node:stream/promises';
import { listenFailure } from '../shared/http-server.ts';
import { PACKAGE_VERSION } from '../shared/package-version.ts';
import { BodyCopy, RECORDED_BODY_LIMIT } from './record-body.ts';
import { maskedBody, maskedHarHeaders, maskedQueryText, MASKING, type MaskReport } from './record-masking.ts';
import { headerValue, RecordingWriter, type HarEntry } from './har.ts';

export const DEFAULT_UPSTREAM_TIMEOUT_SECONDS = 60;

export interface RecordOptions {
  /**
   * The base URL requests go to: http or https, no query or fragment; a path (`https://host/api`) prefixes every
   * request's.
   */
  upstream: string;
  /** The HAR file (replaced if it exists, made 0600). */
  out: string;
  /** 0 picks any free port. Default 9400, where clients of localplane look. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * How long the upstream has to start answering (its status and headers) before the client gets a 502; 0 for no limit.
   * Default 60.
   */
  upstreamTimeoutSeconds?: number;
  /**
   * The time an exchange's `startedDateTime` says, in milliseconds since the epoch. Default the
   * wall clock; a suite that moves a localplane upstream's clock passes that clock, so that the
   * recorded gaps are the ones `verify` moves its own clock by.
   */
  now?: () => number;
}

export interface Recorder {
  /** The proxy's `http://host:port`: the base URL to give clients. */
  url: string;
  /** The upstream's base URL, as requests' paths are appended to it. */
  upstream: string;
  out: string;
  /** Exchanges recorded so far. */
  readonly exchanges: number;
  /** Resolves once every exchange under way now is in the file (an answer has reached its client a moment before). */
  settled(): Promise<void>;
  /**
   * Stops listening, ends the exchanges under way (recorded as cut short) and closes the file, a whole HAR document.
   */
  stop(): Promise<void>;
}

/** An upstream or an output file that record() cannot use. */
export class RecordOptionError extends Error {
  override name = 'RecordOptionError';
}

/** Headers of one connection, not of the exchange (RFC 9110, 7.6.1), beside those the Connection header names. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Node's raw header list (name, value, name, value...) without the hop-by-hop headers and `drop`. */
function endToEndHeaders(raw: readonly string[], drop: readonly string[] = []): [string, string][] {
  const pairs: [string, string][] = [];
  for (let at = 0; at < raw.length; at += 2) pairs.push([raw[at]!, raw[at + 1]!]);
  const named = pairs
    .filter(([name]) => name.toLowerCase() === 'connection')
    .flatMap(([, value]) => value.split(',').map((token) => token.trim().toLowerCase()));
  return pairs.filter(([name]) => {
    const lower = name.toLowerCase();
    return !HOP_BY_HOP.has(lower) && !named.includes(lower) && !drop.includes(lower);
  });
}

function upstreamBase(text: string): URL {
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    // Told below.
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new RecordOptionError(`the upstream must be an http:// or https:// URL, got "${text}"`);
  if (/[?#]/.test(text))
    throw new RecordOptionError(
      `the upstream must be a base URL without a query or fragment (requests bring their own), got "${text}"`,
    );
  if (url.username !== '' || url.password !== '') {
    throw new RecordOptionError(
      `the upstream must not hold credentials (they would be in the recording): send them as headers, ` +
        `got ${url.protocol}//...@${url.host}${url.pathname}`,
    );
  }
  return url;
}

const TLS_ERROR = /^(ERR_TLS_|ERR_SSL_|EPROTO$)|CERT|SELF_SIGNED|UNABLE_TO_/;
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EADDRNOTAVAIL',
]);

/** What the client's 502 says of an upstream that failed before answering. */
function failureDetail(upstream: string, error: NodeJS.ErrnoException & { errors?: Error[] }): string {
  // A name with an IPv4 and an IPv6 address refused on both is an AggregateError without a message.
  const message = error.message || error.errors?.map((each) => each.message).join('; ') || 'no message';
  const said = error.code === undefined || message.includes(error.code) ? message : `${message} (${error.code})`;
  if (error.code !== undefined && TLS_ERROR.test(error.code)) return `upstream ${upstream} TLS error: ${said}`;
  if (error.code !== undefined && UNREACHABLE.has(error.code)) return `upstream ${upstream} unreachable: ${said}`;
  return `upstream ${upstream} failed before answering: ${said}`;
}

/** The upstream's answer as relayed: hop-by-hop headers aside, its body copied as it passes. */
interface RelayedAnswer {
  status: number;
  statusText: string;
  httpVersion: string;
  headers: [string, string][];
  body: BodyCopy;
}

/** What the client gets of an upstream that fails before it answers: a 502 in the service's error shape. */
const failureAnswer = (detail: string) => {
  const body = JSON.stringify({ detail });
  return {
    status: 502,
    headers: [
      ['content-type', 'application/json'],
      ['content-length', String(Buffer.byteLength(body))],
    ] as [string, string][],
    body,
  };
};
type FailureAnswer = ReturnType<typeof failureAnswer>;

/** How an exchange ended, when not as it should. */
interface Ending {
  /** The upstream failed: no answer (the client got a 502) or one broken off. */
  error?: string;
  /** The client went away, or the recording stopped, before the answer ended. */
  comment?: string;
}

interface Proxy {
  base: URL;
  /** The base as requests' targets are appended to it. */
  upstream: string;
  timeoutMs: number;
  now: () => number;
  agent: HttpAgent;
  /** Set by stop(): the exchanges cut from now on were cut by it. */
  stopping: boolean;
}

/** Relays one exchange, and resolves with its entry (masked) once it has ended, however it ended. */
function relay(proxy: Proxy, clientRequest: IncomingMessage, clientResponse: ServerResponse): Promise<HarEntry> {
  const startedDateTime = new Date(proxy.now()).toISOString();
  const started = performance.now();
  const target = `${proxy.base.pathname.replace(/\/+$/, '')}${clientRequest.url ?? '/'}`;
  const requestHeaders = endToEndHeaders(clientRequest.rawHeaders, ['host']);
  const requestBody = new BodyCopy(headerOf(requestHeaders, 'content-encoding'));
  const upstreamRequest = (proxy.base.protocol === 'https:' ? httpsRequest : httpRequest)({
    protocol: proxy.base.protocol,
    hostname: proxy.base.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: proxy.base.port,
    method: clientRequest.method,
    path: target,
    // As an array the headers keep their case, order and repeats; Host is then not added.
    headers: ['Host', proxy.base.host, ...requestHeaders.flat()],
    agent: proxy.agent,
  });
  clientRequest.pipe(upstreamRequest);
  clientRequest.on('data', (chunk: Buffer) => requestBody.add(chunk));
  // A client gone mid-upload: the upstream need not wait for the rest (its answer's close ends the exchange).
  clientRequest.on('error', () => upstreamRequest.destroy());

  let answer: RelayedAnswer | null = null;
  let failure: FailureAnswer | null = null;
  let answeredAt = 0;
  let timedOut = false;

  return new Promise<HarEntry>((resolve) => {
    let ended = false;
    const end = (ending: Ending) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      const done = performance.now();
      // The request's body may still be arriving (an answer before the whole upload); the copy waits for it.
      void finished(clientRequest)
        .catch(() => undefined)
        .then(() => Promise.all([requestBody.end(), answer?.body.end()]))
        .then(() => {
          const wait = (answeredAt || done) - started;
          resolve(
            entryOf({
              proxy,
              clientRequest,
              target,
              requestHeaders,
              requestBody,
              answer,
              failure,
              startedDateTime,
              timings: { wait, receive: done - started - wait },
              ending,
            }),
          );
        });
    };

    const timer =
      proxy.timeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            upstreamRequest.destroy(new Error('timed out'));
          }, proxy.timeoutMs)
        : undefined;

    upstreamRequest.once('response', (response) => {
      clearTimeout(timer);
      answeredAt = performance.now();
      const headers = endToEndHeaders(response.rawHeaders);
      const body = new BodyCopy(headerOf(headers, 'content-encoding'));
      answer = {
        status: response.statusCode!,
        statusText: response.statusMessage ?? '',
        httpVersion: `HTTP/${response.httpVersion}`,
        headers,
        body,
      };
      let brokenBy: Error | null = null;
      response.on('error', (error) => (brokenBy = error));
      response.once('close', () => {
        if (response.complete) return;
        clientResponse.destroy();
        end({
          error: `upstream ${proxy.upstream} broke off its answer: ${brokenBy?.message ?? 'the connection closed'}`,
        });
      });
      clientResponse.writeHead(answer.status, answer.statusText, headers.flat());
      // Sent now: a stream's first event may be long in coming.
      clientResponse.flushHeaders();
      response.on('data', (chunk: Buffer) => body.add(chunk));
      response.pipe(clientResponse);
    });

    upstreamRequest.on('error', (error: NodeJS.ErrnoException) => {
      if (ended || answer !== null) return;
      const detail = timedOut
        ? `upstream ${proxy.upstream} did not answer within ${proxy.timeoutMs / 1000} s`
        : failureDetail(proxy.upstream, error);
      failure = failureAnswer(detail);
      clientResponse.writeHead(failure.status, failure.headers.flat()).end(failure.body);
      end({ error: detail });
    });

    clientResponse.once('finish', () => end({}));
    clientResponse.once('close', () => {
      if (clientResponse.writableFinished) return;
      upstreamRequest.destroy();
      end({
        comment: proxy.stopping
          ? 'the recording stopped before the answer ended'
          : 'the client closed the connection before the answer ended',
      });
    });
  });
}

const headerOf = (pairs: readonly [string, string][], name: string) =>
  headerValue(
    pairs.map(([n, value]) => ({ name: n, value })),
    name,
  );

interface ExchangeRecord {
  proxy: Proxy;
  clientRequest: IncomingMessage;
  target: string;
  requestHeaders: [string, string][];
  requestBody: BodyCopy;
  answer: RelayedAnswer | null;
  failure: FailureAnswer | null;
  startedDateTime: string;
  timings: { wait: number; receive: number };
  ending: Ending;
}

/** A body as HAR keeps it (postData, content), masked: its first RECORDED_BODY_LIMIT bytes. */
function harBody(copy: BodyCopy, mimeType: string, where: string, report: MaskReport) {
  if (copy.unreadable !== null) return { comment: copy.unreadable };
  const truncated = copy.truncated;
  return { ...maskedBody(copy.bytes, mimeType, !truncated, where, report), ...(truncated ? { _truncated: true } : {}) };
}

/**
 * The entry's response: the upstream's answer, masked; the 502 the client got instead; or none
 * (status 0, as browsers record a request cut short) when the client went first.
 */
function harResponse(answer: RelayedAnswer | null, failure: FailureAnswer | null, report: MaskReport) {
  if (answer !== null) {
    const mimeType = headerOf(answer.headers, 'content-type') ?? '';
    const headers = maskedHarHeaders(answer.headers, 'response.headers', report);
    return {
      status: answer.status,
      statusText: answer.statusText,
      httpVersion: answer.httpVersion,
      cookies: [],
      headers,
      content: { size: answer.body.size, mimeType, ...harBody(answer.body, mimeType, 'response.content', report) },
      redirectURL: headerValue(headers, 'location') ?? '',
      headersSize: -1,
      bodySize: answer.body.wireSize,
    };
  }
  const size = failure === null ? 0 : Buffer.byteLength(failure.body);
  return {
    status: failure?.status ?? 0,
    statusText: failure === null ? '' : (STATUS_CODES[failure.status] ?? ''),
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers: failure?.headers.map(([name, value]) => ({ name, value })) ?? [],
    content: failure === null ? { size, mimeType: '' } : { size, mimeType: 'application/json', text: failure.body },
    redirectURL: '',
    headersSize: -1,
    bodySize: size,
  };
}

/** The exchange as the file keeps it, everything masked on the way in and named in `_masked`. */
function entryOf({
  proxy,
  clientRequest,
  target,
  requestHeaders,
  requestBody,
  answer,
  failure,
  startedDateTime,
  timings,
  ending,
}: ExchangeRecord): HarEntry {
  const masked = new Set<string>();
  const report: MaskReport = (where) => masked.add(where);
  const mark = target.indexOf('?');
  const path = mark === -1 ? target : target.slice(0, mark);
  const query = mark === -1 ? '' : maskedQueryText(target.slice(mark + 1), 'request.queryString', report);
  const requestType = headerOf(requestHeaders, 'content-type') ?? '';
  return {
    startedDateTime,
    time: timings.wait + timings.receive,
    request: {
      method: clientRequest.method ?? 'GET',
      url: `${proxy.base.origin}${path}${mark === -1 ? '' : `?${query}`}`,
      httpVersion: `HTTP/${clientRequest.httpVersion}`,
      cookies: [],
      headers: maskedHarHeaders(requestHeaders, 'request.headers', report),
      queryString: [...new URLSearchParams(query)].map(([name, value]) => ({ name, value })),
      ...(requestBody.wireSize > 0
        ? { postData: { mimeType: requestType, ...harBody(requestBody, requestType, 'request.postData', report) } }
        : {}),
      headersSize: -1,
      bodySize: requestBody.wireSize,
    },
    response: harResponse(answer, failure, report),
    cache: {},
    timings: { send: 0, wait: timings.wait, receive: timings.receive },
    ...(masked.size > 0 ? { _masked: [...masked] } : {}),
    ...(ending.error !== undefined ? { _error: ending.error } : {}),
    ...(ending.comment !== undefined ? { comment: ending.comment } : {}),
  };
}

/**
 * Starts a recording proxy in front of `upstream`, recording to `out`. Throws a RecordOptionError
 * for an upstream it cannot use or a file it cannot write, and an Error naming the port for one in use.
 */
export async function record(options: RecordOptions): Promise<Recorder> {
  const base = upstreamBase(options.upstream);
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 9400;
  const proxy: Proxy = {
    base,
    upstream: `${base.origin}${base.pathname.replace(/\/+$/, '')}`,
    timeoutMs: (options.upstreamTimeoutSeconds ?? DEFAULT_UPSTREAM_TIMEOUT_SECONDS) * 1000,
    now: options.now ?? Date.now,
    agent: base.protocol === 'https:' ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true }),
    stopping: false,
  };
  let writer: RecordingWriter | null = null;
  const underWay = new Set<Promise<void>>();
  const server = createServer((clientRequest, clientResponse) => {
    const recorded = relay(proxy, clientRequest, clientResponse).then((entry) => writer!.append(entry));
    underWay.add(recorded);
    void recorded.finally(() => underWay.delete(recorded));
  });
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      listening();
    });
  }).catch((error: unknown) => {
    throw listenFailure('proxy', host, port, error);
  });
  try {
    writer = new RecordingWriter(
      options.out,
      { name: 'localplane', version: PACKAGE_VERSION },
      { _localplane: { upstream: proxy.upstream, masking: MASKING, body_limit_bytes: RECORDED_BODY_LIMIT } },
    );
  } catch (error) {
    server.close();
    throw new RecordOptionError(`cannot write the recording ${options.out}: ${(error as Error).message}`);
  }
  const { port: boundPort } = server.address() as AddressInfo;
  const open = writer;
  let stopped: Promise<void> | null = null;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`,
    upstream: proxy.upstream,
    out: options.out,
    get exchanges() {
      return open.count;
    },
    settled: async () => {
      await Promise.all(underWay);
    },
    stop: () =>
      (stopped ??= (async () => {
        proxy.stopping = true;
        const closed = new Promise((done) => server.close(done));
        server.closeAllConnections();
        await Promise.all([closed, ...underWay]);
        proxy.agent.destroy();
        open.close();
      })()),
  };
}
