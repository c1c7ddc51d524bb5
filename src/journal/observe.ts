import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpBindings } from '@hono/node-server';
import type { Context, MiddlewareHandler } from 'hono';
import type { ObjstoreFault, ObjstoreObserver, ObjstoreRequestRecord, ObservedBody } from '../objstore/types.ts';
import type { AuthVariables } from '../workspaces/auth.ts';
import type { Clock } from '../shared/clock.ts';
import { isInProcessCall } from '../shared/in-process-calls.ts';
import { printable } from '../shared/log-text.ts';
import { ABORTED_STATUS, headerText, whenResponseEnds, type CapturedResponse } from '../shared/response-capture.ts';
import { bodyReadOf } from '../shared/validation.ts';
import {
  JOURNAL_BODY_CHARS,
  journalBody,
  maskedHeaders,
  maskedQuery,
  maskAsRead,
  maskSecretQueryValues,
  maskSigningDetails,
  maskWhole,
} from './entries.ts';
import type { JournalBody, JournalEntry } from './schemas.ts';
import type { FaultEffect, FaultRules } from './fault-rules.ts';
import type { EntryDetails, EntryParts, EntrySummary, RequestJournal } from './journal.ts';
import { isHarnessPath, type MatchableRequest } from './matching.ts';

export interface ObserverDeps {
  journal: RequestJournal;
  faultRules: FaultRules;
  clock: Pick<Clock, 'now'>;
  /** The workspace an API key belongs to, for fault rules matched before authentication. */
  workspaceOfApiKey(apiKey: string): string | null;
  /** Where the request log goes (one line per request); null for none. */
  requestLog: ((line: string) => void) | null;
  /** Colours the status in the request log (a terminal). */
  colour: boolean;
}

interface Arrival {
  micros: number;
  wallMs: number;
  startedAt: number;
  faultRuleId: string | null;
}

const arrivalNow = (clock: Pick<Clock, 'now'>): Arrival => ({
  micros: clock.now(),
  wallMs: Date.now(),
  startedAt: performance.now(),
  faultRuleId: null,
});

const STATUS_COLOURS: Readonly<Record<number, number>> = { 2: 32, 3: 36, 4: 33, 5: 31 };

/**
 * `[objstore ]METHOD /path STATUS Nms`: the path without its query, which may hold presigned signatures, control
 * characters escaped.
 */
export function requestLogLine(
  entry: Pick<JournalEntry, 'source' | 'method' | 'path' | 'status' | 'duration_ms'>,
  colour: boolean,
): string {
  const status = colour
    ? `\u001b[${STATUS_COLOURS[Math.floor(entry.status / 100)] ?? 0}m${entry.status}\u001b[0m`
    : String(entry.status);
  const source = entry.source === 'objstore' ? 'objstore ' : '';
  return `${source}${printable(`${entry.method} ${entry.path}`)} ${status} ${Math.round(entry.duration_ms)}ms`;
}

const keepText = (text: string) => text;

/**
 * API responses are kept as sent, never parsed (parsing a 32 KB list costs more than serving it):
 * the API answers no secret values (test/instance/secret-leaks.test.ts reads every answer, the journal's too).
 */
const apiResponseBody = ({ head, size, contentType }: CapturedResponse) =>
  journalBody({ bytes: head, size, contentType, maskText: keepText, maskJson: null });

/** Names the fault rule that answered an API request with its status and detail. */
export const FAULT_RULE_HEADER = 'X-Localplane-Fault-Rule';

const splitTarget = (target: string) => {
  const mark = target.indexOf('?');
  return mark === -1 ? { path: target, search: '' } : { path: target.slice(0, mark), search: target.slice(mark) };
};

const urlTarget = (url: string) => {
  const { pathname, search } = new URL(url);
  return { path: pathname, search };
};

/** Name and value pairs of Node's raw header list (name, value, name, value...) or of a Headers. */
function headerPairsOf(headers: readonly string[] | Headers): [string, string][] {
  if (!Array.isArray(headers)) return [...(headers as Headers)];
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([headers[i]!, headers[i + 1]!]);
  return pairs;
}

/** Journals every API and objstore request, logs it, and lets the fault rules act on it. */
export class RequestObserver {
  /** Ends the added latencies under way when the instance stops. */
  private readonly stopping = new AbortController();

  constructor(private readonly deps: ObserverDeps) {}

  /** Requests still waiting out an added latency get no reply (their connections are being closed). */
  stop(): void {
    this.stopping.abort();
  }

  /** Waits out an added latency; false when the instance stopped meanwhile. */
  private delay(ms: number): Promise<boolean> {
    return sleep(ms, true, { ref: false, signal: this.stopping.signal }).catch(() => false);
  }

  /**
   * Journals and logs a request: what the log and the journal's filters read at once, the rest made from `parts` only
   * when the journal is read.
   */
  private record(arrival: Arrival, summary: EntrySummary, parts: RecordedParts): void {
    this.deps.journal.record(arrival.micros, summary, arrival.faultRuleId, parts);
    this.deps.requestLog?.(requestLogLine({ ...summary, duration_ms: parts.duration_ms }, this.deps.colour));
  }

  private fire(arrival: Arrival, request: MatchableRequest): FaultEffect | null {
    const fired = this.deps.faultRules.fire(request);
    arrival.faultRuleId = fired?.ruleId ?? null;
    return fired?.effect ?? null;
  }

  /**
   * Hono middleware for the API (the harness's own paths and the dashboard's in-process calls are neither journalled
   * nor faulted).
   */
  api(): MiddlewareHandler<{ Variables: Partial<AuthVariables>; Bindings: Partial<HttpBindings> }> {
    return async (c, next) => {
      const incoming = c.env?.incoming;
      // The target as it arrived; in process (app.request) there is no socket, only the URL.
      const { path, search } = incoming?.url !== undefined ? splitTarget(incoming.url) : urlTarget(c.req.url);
      if (isInProcessCall(c.env) || isHarnessPath(path)) return next();
      const arrival = arrivalNow(this.deps.clock);
      const headers = c.req.raw.headers;
      /** The API key's workspace (authentication may not have run, or refused the request), else X-Tenant-Id. */
      let keyWorkspaceId: string | null | undefined;
      const workspaceId = () => {
        if (keyWorkspaceId === undefined) {
          const apiKey = headers.get('x-api-key');
          keyWorkspaceId =
            (apiKey === null ? null : this.deps.workspaceOfApiKey(apiKey)) ??
            headers.get('x-tenant-id')?.toLowerCase() ??
            null;
        }
        return keyWorkspaceId;
      };
      const method = c.req.method;
      const effect = this.fire(arrival, {
        source: 'api',
        method,
        path,
        workspaceId,
        header: (name) => headers.get(name) ?? undefined,
      });

      const stopped = effect?.kind === 'delay' && !(await this.delay(effect.ms));
      if (stopped) c.res = cutConnection(incoming, 'reset');
      else if (effect?.kind === 'error') c.res = faultReply(c, effect, arrival.faultRuleId!);
      else if (effect?.kind === 'reset' || effect?.kind === 'close') c.res = cutConnection(incoming, effect.kind);
      else await next();

      // Kept for the journal's reading: the header pairs as received (not the request, which holds its socket).
      const headerList: readonly string[] | Headers = incoming?.rawHeaders ?? headers;
      const requestBody = apiRequestBody(c.req.raw);
      const workspace_id = c.get('workspace')?.id ?? workspaceId();
      const journal = (status: number, written: CapturedResponse | null) =>
        this.record(
          arrival,
          { source: 'api', method, path, status, workspace_id, target: null },
          new ApiEntryParts(arrival, requestBody, written, search, headerList),
        );
      if (stopped || effect?.kind === 'reset' || effect?.kind === 'close') return journal(ABORTED_STATUS, null);
      const outgoing = c.env?.outgoing;
      if (outgoing) {
        // What goes to the socket: reading a clone of the response would cost more than the whole request.
        whenResponseEnds(outgoing, JOURNAL_BODY_CHARS, ({ status, written }) => journal(status, written));
      } else {
        const bytes = c.res.body === null ? new Uint8Array(0) : new Uint8Array(await c.res.clone().arrayBuffer());
        // Only a copy of the head is kept, as from a socket: the entry is made later, from it.
        const head = Buffer.from(bytes.slice(0, JOURNAL_BODY_CHARS).buffer);
        const headerPairs = [...c.res.headers];
        journal(c.res.status, {
          head,
          source: head,
          size: bytes.byteLength,
          contentType: c.res.headers.get('content-type'),
          headerPairs: () => headerPairs,
        });
      }
    };
  }

  /** The objstore's observer: the same journal, log and fault rules. */
  objstore(): ObjstoreObserver {
    /** The target and headers as they arrived: kept before the gateway's handlers read or change the request. */
    const arrivals = new WeakMap<
      IncomingMessage,
      { arrival: Arrival; path: string; search: string; headers: Record<string, string> }
    >();
    return {
      arrive: (req) => {
        const arrival = arrivalNow(this.deps.clock);
        const { path, search } = splitTarget(req.url ?? '/');
        arrivals.set(req, { arrival, path, search, headers: maskedHeaders(headerPairsOf(req.rawHeaders)) });
        const effect = this.fire(arrival, {
          source: 'objstore',
          method: (req.method ?? 'GET').toUpperCase(),
          path,
          workspaceId: () => null,
          header: (name) => headerText(req.headers[name.toLowerCase()]) ?? undefined,
        });
        if (effect?.kind !== 'delay') return objstoreFault(effect);
        return this.delay(effect.ms).then((served): ObjstoreFault | null => (served ? null : { kind: 'reset' }));
      },
      complete: ({ req, record, requestBody, responseBody, responseHeaders }) => {
        const { arrival, path, search, headers } = arrivals.get(req) ?? {
          arrival: arrivalNow(this.deps.clock),
          ...splitTarget(req.url ?? '/'),
          headers: {},
        };
        this.record(
          arrival,
          {
            source: 'objstore',
            method: record.method,
            path,
            status: record.status,
            workspace_id: null,
            target: { operation: record.operation, bucket: record.bucket, key: record.key },
          },
          new ObjstoreEntryParts(arrival, requestBody, responseBody, search, headers, responseHeaders, record),
        );
      },
    };
  }
}

/**
 * When a request came and how long it took, and what the rest of its entry is made from. Made
 * apart from the middleware: a closure made there would keep all that its closures share (the
 * request's headers, and through them the request and its socket) for as long as the journal
 * keeps the entry.
 */
abstract class RecordedParts implements EntryParts {
  readonly wallMs: number;
  readonly duration_ms: number;

  constructor(arrival: Arrival) {
    this.wallMs = arrival.wallMs;
    this.duration_ms = Math.round((performance.now() - arrival.startedAt) * 1000) / 1000;
  }

  abstract requestBody(): JournalBody;
  abstract responseBody(): JournalBody;
  abstract details(): EntryDetails;
}

/** No body, nor a content type: one object for every such entry. */
const NO_BODY: JournalBody = Object.freeze({ text: null, size: 0, content_type: null, truncated: false });

class ApiEntryParts extends RecordedParts {
  constructor(
    arrival: Arrival,
    private readonly readBody: JournalBody,
    /** Null when the connection was cut before a reply. */
    private readonly written: CapturedResponse | null,
    private readonly search: string,
    /** The header pairs as received (not the request, which holds its socket). */
    private readonly headerList: readonly string[] | Headers,
  ) {
    super(arrival);
  }

  get responseSource(): string | Buffer | undefined {
    return this.written?.source;
  }

  requestBody(): JournalBody {
    return this.readBody;
  }

  responseBody(): JournalBody {
    return this.written === null ? NO_BODY : apiResponseBody(this.written);
  }

  details(): EntryDetails {
    return {
      query: maskedQuery(this.search),
      requestHeaders: maskedHeaders(headerPairsOf(this.headerList)),
      responseHeaders: maskedHeaders(this.written?.headerPairs() ?? []),
      objstore: null,
    };
  }
}

class ObjstoreEntryParts extends RecordedParts {
  constructor(
    arrival: Arrival,
    private readonly requestWritten: ObservedBody,
    private readonly responseWritten: ObservedBody,
    private readonly search: string,
    /** Masked as they arrived. */
    private readonly headers: Record<string, string>,
    private readonly responseHeaders: [string, string][],
    private readonly record: ObjstoreRequestRecord,
  ) {
    super(arrival);
  }

  requestBody(): JournalBody {
    return objstoreBody(this.requestWritten);
  }

  responseBody(): JournalBody {
    return objstoreBody(this.responseWritten);
  }

  details(): EntryDetails {
    const { operation, bucket, key, accessKeyId, errorCode } = this.record;
    return {
      query: maskedQuery(this.search),
      requestHeaders: this.headers,
      responseHeaders: maskedHeaders(this.responseHeaders),
      objstore: { operation, bucket, key, access_key_id: accessKeyId, error_code: errorCode },
    };
  }
}

const objstoreBody = ({ head, size, contentType }: ObservedBody): JournalBody =>
  journalBody({ bytes: head, size, contentType, maskText: maskSigningDetails });

/** What the endpoint read of the body (see BodyRead); only the declared size of a body it did not read. */
function apiRequestBody(request: Request): JournalBody {
  const contentType = request.headers.get('content-type');
  const read = bodyReadOf(request);
  if (read === undefined) {
    const declared = request.headers.get('content-length');
    const size = declared !== null ? Number(declared) : request.headers.has('transfer-encoding') ? null : 0;
    return size === 0 && contentType === null
      ? NO_BODY
      : { text: null, size, content_type: contentType, truncated: false };
  }
  // Text that is not JSON (a form, say) may still carry secrets as query parameters.
  const masks = read.carriesSecrets
    ? { maskText: maskWhole, maskJson: maskAsRead(read.accepted) }
    : { maskText: (text: string) => maskSecretQueryValues(text) };
  return journalBody({ bytes: read.bytes, size: read.bytes.byteLength, contentType, ...masks });
}

/** A fault rule's error reply: its JSON body (else `{"detail": ...}`) and headers, naming the rule. */
function faultReply(c: Context, effect: Extract<FaultEffect, { kind: 'error' }>, ruleId: string): Response {
  const body = 'body' in effect ? effect.body : { detail: effect.detail };
  return c.json(body as object, effect.status as 400, { ...effect.headers, [FAULT_RULE_HEADER]: ruleId });
}

function objstoreFault(effect: FaultEffect | null): ObjstoreFault | null {
  if (effect === null || effect.kind === 'delay') return null;
  if (effect.kind === 'error')
    return { kind: 'error', status: effect.status, code: effect.code, message: effect.detail, headers: effect.headers };
  return { kind: effect.kind };
}

/**
 * Drops the connection (reset) or closes it without a byte of reply. Without a socket (an
 * in-process `app.request()`), the reply is a body stream that fails as the dropped connection would.
 */
function cutConnection(incoming: IncomingMessage | undefined, how: 'reset' | 'close'): Response {
  if (incoming) {
    if (how === 'reset') incoming.socket.resetAndDestroy();
    else incoming.socket.end();
    // Nothing reaches the client: the server's writes to the socket are dropped.
    return new Response(null);
  }
  return new Response(
    new ReadableStream({
      start: (controller) =>
        controller.error(
          new Error(how === 'reset' ? 'connection reset by a fault rule' : 'empty reply from a fault rule'),
        ),
    }),
  );
}
