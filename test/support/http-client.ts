import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { checkServedResponse, servedChecker } from './openapi.ts';
import type { UntypedJson } from './untyped-json.ts';

export interface Reply {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: UntypedJson;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export interface SendOptions {
  /** An array value is sent as that many header lines. */
  headers?: Record<string, string | string[]>;
  /** Sent as is: no content type is added. */
  body?: string | Uint8Array;
  /** Streams the body in pieces without a Content-Length (Transfer-Encoding: chunked). */
  chunked?: boolean;
  timeoutMs?: number;
  agent?: Agent;
}

/**
 * One request through node:http, which sends the method, target and body exactly as given
 * (fetch would normalise the path and add a content type). Rejects when no reply comes in time.
 */
const ignoreSocketError = () => {};

export async function send(baseUrl: string, method: string, target: string, options: SendOptions = {}): Promise<Reply> {
  const { hostname, port, origin } = new URL(baseUrl);
  await servedChecker(origin);
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers };
    if (options.body !== undefined && !options.chunked)
      headers['content-length'] = String(Buffer.byteLength(options.body));
    const request = httpRequest(
      { hostname, port, method, path: target, headers, agent: options.agent, timeout: timeoutMs },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          // Answered before the whole body went out (a 413 while streaming): the rest would only meet a closed socket
          // (EPIPE).
          if (!request.writableFinished) request.destroy();
          const text = Buffer.concat(chunks).toString('utf8');
          const replyHeaders: Record<string, string> = {};
          for (const [name, value] of Object.entries(response.headers))
            replyHeaders[name] = Array.isArray(value) ? value.join(', ') : String(value);
          const reply = { status: response.statusCode!, headers: replyHeaders, text, json: parseJson(text) };
          // The served OpenAPI document describes every response of the API (the objstore has none).
          checkServedResponse(
            `${new URL(baseUrl).origin}${target}`,
            method,
            reply.status,
            replyHeaders['content-type'] ?? '',
            text,
            replyHeaders['x-localplane-fault-rule'] ?? null,
          ).then(() => resolve(reply), reject);
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () =>
      request.destroy(new Error(`no reply to ${method} ${target.slice(0, 200)} within ${timeoutMs} ms`)),
    );
    request.on('error', reject);
    // A server that refuses a body before reading it (413) closes while the rest is still being
    // written: that write fails (EPIPE, ECONNRESET) after the reply came, possibly once the
    // socket is no longer the request's. The reply is what the test reads.
    request.on('socket', (socket) => {
      // Once per socket: a kept-alive socket serves many requests.
      if (socket.listeners('error').includes(ignoreSocketError)) return;
      socket.on('error', ignoreSocketError);
    });
    if (options.body !== undefined && options.chunked) {
      const bytes = Buffer.from(options.body);
      for (let offset = 0; offset < bytes.length; offset += 64 * 1024)
        request.write(bytes.subarray(offset, offset + 64 * 1024));
    } else if (options.body !== undefined) {
      request.write(options.body);
    }
    request.end();
  });
}

/** Where the final reply's head ends in what was read, past any interim (1xx) replies. */
function finalHeadEnd(received: Buffer): { start: number; end: number } | null {
  for (let start = 0; ;) {
    const end = received.indexOf('\r\n\r\n', start);
    if (end === -1) return null;
    if (!/^HTTP\/\d\.\d 1\d\d/.test(received.subarray(start, end).toString('latin1'))) return { start, end };
    start = end + 4;
  }
}

/**
 * Writes raw bytes on a fresh TCP connection, ends its side, and reads one HTTP reply: for
 * requests no HTTP client would send (malformed request lines, oversized heads, bad targets).
 */
export function sendRaw(baseUrl: string, bytes: string | Uint8Array, timeoutMs = 10_000): Promise<Reply> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(bytes));
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      clearTimeout(timer);
      if (error) return reject(error);
      const head = finalHeadEnd(received);
      if (!head)
        return reject(new Error(`no complete reply, got ${JSON.stringify(received.toString('latin1').slice(0, 200))}`));
      const [statusLine, ...headerLines] = received.subarray(head.start, head.end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const body = received.subarray(head.end + 4).toString('utf8');
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, text: body, json: parseJson(body) });
    };
    const timer = setTimeout(() => finish(new Error(`no reply within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const head = finalHeadEnd(received);
      if (!head) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(
        received.subarray(head.start, head.end).toString('latin1'),
      )?.[1];
      if (length !== undefined && received.length >= head.end + 4 + Number(length)) finish();
    });
    socket.on('end', () => finish());
    socket.on('close', () => finish());
    // A server that closes while the request is still being written resets the connection: read what came.
    socket.on('error', () => finish());
  });
}
