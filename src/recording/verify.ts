/**
 * `localplane verify`: replays a recording's requests in order against localplane and compares
 * each answer with the recorded one (docs/recording.md#verify). The recorded workspace, API key,
 * masked credentials and the ids the upstream created are mapped to localplane's own.
 */
import { MASKED_SECRET_VALUE } from '../shared/errors.ts';
import { copyJson, jsonText } from '../shared/json-walk.ts';
import {
  bodyBytes,
  bodyJson,
  headerValue,
  readRecording,
  type HarEntry,
  type HarLog,
  type HarResponse,
} from './har.ts';
import { compareAnswers, describeDifference, type ComparedAnswer } from './verify-compare.ts';
import { IdMap, idsOf, type UnknownId } from './verify-ids.ts';
import {
  openTarget,
  sendInProcess,
  sendOverHttp,
  workspaceChooser,
  type TargetWorkspace,
  type ReplayInstance,
  type Target,
} from './verify-target.ts';

export { VerifyError } from './verify-target.ts';

export interface VerifyOptions {
  /**
   * A running localplane's API URL: the recording is replayed into it as it is (no reset). Default: a fresh instance of
   * verify's own, its clock frozen.
   */
  url?: string;
  /**
   * The fixture workspace the recorded workspaces stand for; default the recorded one when the instance has it, else
   * the first on a plan with bulk exports.
   */
  workspace?: string;
}

export type Outcome = 'same' | 'drift' | 'not comparable' | 'skipped';

export interface ExchangeVerdict {
  /** The exchange's place in the recording's `log.entries`, from 0. */
  index: number;
  method: string;
  /** The recorded path and query. */
  path: string;
  outcome: Outcome;
  /** What differs (drift), why it cannot be compared (not comparable) or skipped; none when the same. */
  reasons: string[];
}

export interface VerifyReport {
  exchanges: number;
  same: number;
  drift: number;
  notComparable: number;
  skipped: number;
  /** Every exchange, in the recording's order. */
  results: ExchangeVerdict[];
  /** The ids mapped as they were created: recorded id → localplane's. */
  ids: Record<string, string>;
}

/**
 * Replays a recording into a fresh instance (made by `freshInstance`, stopped afterwards) or, with `url`, a running
 * one.
 */
export async function verifyWith(
  recording: string | HarLog,
  options: VerifyOptions,
  freshInstance: () => Promise<ReplayInstance>,
): Promise<VerifyReport> {
  const log = typeof recording === 'string' ? readRecording(recording) : recording;
  if (options.url !== undefined)
    return replay(log, await openTarget(sendOverHttp(options.url), options.url), options.workspace);
  const instance = await freshInstance();
  try {
    return await replay(log, await openTarget(sendInProcess(instance), 'the instance'), options.workspace);
  } finally {
    await instance.stop();
  }
}

const TENANT_HEADER = 'x-tenant-id';
const KEY_HEADER = 'x-api-key';
/** Headers not replayed: the connection's own, and the upstream's credentials (localplane's are set instead). */
const NOT_REPLAYED = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-connection',
  'proxy-authorization',
  'accept-encoding',
  'cookie',
  'authorization',
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BODILESS_METHODS = new Set(['GET', 'HEAD']);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);
const startedAt = (entry: HarEntry) => Date.parse(entry.startedDateTime);

function recordedAnswer(response: HarResponse): ComparedAnswer {
  const contentType = headerValue(response.headers, 'content-type') ?? response.content.mimeType;
  return {
    status: response.status,
    // Browsers write x-unknown for an answer without a Content-Type.
    contentType: contentType === 'x-unknown' ? '' : contentType,
    body: bodyJson(response.content),
    bodyKept:
      response.content.text !== undefined ||
      response.content.size === 0 ||
      response.status === 204 ||
      response.status === 304,
  };
}

/**
 * Why a recorded answer is no answer of the upstream's to compare with: the recorder's own error, or a body cut short.
 */
function brokenAnswer(entry: HarEntry): string | null {
  const error = entry._error ?? entry.response._error;
  if (error !== undefined && error !== null && error !== false) {
    return `the recorded answer is the recorder's error: ${typeof error === 'string' ? error : jsonText(error)}`;
  }
  if (entry.response.status === 0) return 'the request got no answer when it was recorded';
  const { content } = entry.response;
  const kept = bodyBytes(content)?.length;
  // A body the recorder masked is no longer as long as the answer was: only its `_truncated` says it was cut.
  const cut = content._truncated === true || (!maskedAnswer(entry) && kept !== undefined && content.size > kept);
  return cut ? `the recorded answer was cut (${kept} of ${content.size} bytes)` : null;
}

const maskedAnswer = (entry: HarEntry) =>
  (entry._masked ?? []).some((where) => where === 'response.content' || where.startsWith('response.content.'));

function unknownIdReason(unknown: UnknownId): string {
  return unknown.firstSeenIn === null
    ? `${unknown.id} existed upstream before the recording`
    : `${unknown.id} (from the answer of #${unknown.firstSeenIn}) has no counterpart here`;
}

class Replay {
  private readonly ids: IdMap;
  private readonly workspaceFor: (recordedTenant: string | undefined) => TargetWorkspace;
  /** The workspace of requests that carry a key but no X-Tenant-Id. */
  private readonly firstTenant: string | undefined;
  /** Recorded time not yet passed on the instance's clock, in seconds. */
  private pendingSeconds = 0;
  private lastStart = Number.NaN;

  constructor(
    private readonly target: Target,
    entries: readonly HarEntry[],
    workspace: string | undefined,
  ) {
    this.ids = new IdMap(target.fixtureIds);
    this.workspaceFor = workspaceChooser(target.workspaces, workspace);
    const tenants = entries
      .map((entry) => headerValue(entry.request.headers, TENANT_HEADER))
      .filter((tenant) => tenant !== undefined);
    this.firstTenant = tenants[0];
    for (const tenant of tenants) this.ids.map(tenant, this.workspaceFor(tenant).id);
  }

  get mappedIds(): Record<string, string> {
    return this.ids.mapped();
  }

  async exchange(entry: HarEntry, index: number): Promise<ExchangeVerdict> {
    const url = new URL(entry.request.url, 'http://recording.invalid');
    const verdict = (outcome: Outcome, reasons: string[]): ExchangeVerdict => ({
      index,
      method: entry.request.method,
      path: url.pathname + url.search,
      outcome,
      reasons,
    });
    this.passTime(entry);
    if (!this.target.isApiPath(url.pathname)) return verdict('skipped', ['not a request to the API']);
    const recorded = recordedAnswer(entry.response);
    const broken = brokenAnswer(entry);
    const requestJson = bodyJson(entry.request.postData);
    const unknown = this.ids
      .unknown([...idsOf(url.pathname + url.search), ...idsOf(requestJson)])
      // A resource the upstream did not have either (it answered 404) is none to be missing here.
      .filter((id) => id.firstSeenIn !== null || recorded.status !== 404);
    if (broken !== null || unknown.length > 0) {
      this.ids.learn(recorded.body, undefined, index);
      return verdict('not comparable', broken !== null ? [broken] : unknown.map(unknownIdReason));
    }
    const { here, setupProblems } = await this.send(entry, url, requestJson, recorded);
    this.ids.learn(recorded.body, recorded.status === here.status ? here.body : undefined, index);
    const differences = compareAnswers(recorded, here).map(describeDifference);
    return differences.length === 0 ? verdict('same', []) : verdict('drift', [...differences, ...setupProblems]);
  }

  /** Moves the recorded gap since the previous exchange onto the clock, before the next request is sent. */
  private passTime(entry: HarEntry): void {
    const start = startedAt(entry);
    if (Number.isNaN(start)) return;
    // The first exchange, and one recorded out of order, add no time.
    if (start > this.lastStart) this.pendingSeconds += (start - this.lastStart) / 1000;
    this.lastStart = Number.isNaN(this.lastStart) ? start : Math.max(this.lastStart, start);
  }

  private async advanceClock(): Promise<void> {
    if (!this.target.frozenClock || !(this.pendingSeconds > 0)) return;
    const seconds = this.pendingSeconds;
    this.pendingSeconds = 0;
    const answer = await this.target.send('/_localplane/clock/advance', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seconds }),
    });
    if (!answer.ok)
      throw new Error(`POST /_localplane/clock/advance answered ${answer.status}: ${await answer.text()}`);
  }

  /**
   * Sends the request as rewritten for this instance; what went wrong preparing it (a bucket it could not create) comes
   * with the answer.
   */
  private async send(
    entry: HarEntry,
    url: URL,
    requestJson: unknown,
    recorded: ComparedAnswer,
  ): Promise<{ here: ComparedAnswer; setupProblems: string[] }> {
    const method = entry.request.method.toUpperCase();
    const setupProblems: string[] = [];
    let body: BodyInit | undefined;
    if (!BODILESS_METHODS.has(method)) {
      if (requestJson !== undefined) {
        const replayed = this.withWorkingCredentials(this.ids.rewriteJson(requestJson));
        setupProblems.push(...(await this.prepareDestination(replayed, recorded.status)));
        body = jsonText(replayed);
      } else {
        const bytes = bodyBytes(entry.request.postData);
        body = bytes && Uint8Array.from(bytes);
      }
    }
    await this.advanceClock();
    const answer = await this.target.send(this.ids.rewriteText(url.pathname + url.search), {
      method,
      headers: this.headers(entry),
      body,
    });
    const text = await answer.text();
    return {
      here: {
        status: answer.status,
        contentType: answer.headers.get('content-type') ?? '',
        body: bodyJson({ text }),
        bodyKept: true,
      },
      setupProblems,
    };
  }

  private headers(entry: HarEntry): Headers {
    const headers = new Headers();
    const recordedTenant = headerValue(entry.request.headers, TENANT_HEADER);
    for (const { name, value } of entry.request.headers) {
      const lower = name.toLowerCase();
      if (NOT_REPLAYED.has(lower) || !HEADER_NAME.test(name)) continue;
      const replayed =
        lower === KEY_HEADER
          ? this.workspaceFor(recordedTenant ?? this.firstTenant).api_key
          : lower === TENANT_HEADER
            ? this.workspaceFor(value).id
            : this.ids.rewriteText(value);
      try {
        headers.set(name, replayed);
      } catch {
        // A value Headers refuses (a control character) is one no client sent over the wire.
      }
    }
    return headers;
  }

  /**
   * Masked credentials made working again: destination `credentials` become a fixture key pair
   * (the recorded key id's when it is a fixture key, else the full-access pair). Other masked
   * values (deployment secrets' names and values) are valid as they are.
   */
  private withWorkingCredentials(value: unknown): unknown {
    return copyJson(value, (field, key) =>
      key === 'credentials' ? { value: this.workingCredentials(field) } : undefined,
    );
  }

  private workingCredentials(recorded: unknown): unknown {
    const keyId = isRecord(recorded) ? recorded.access_key_id : undefined;
    const fixture = this.target.fixtureKeys.find((key) => key.access_key_id === keyId);
    if (
      fixture &&
      isRecord(recorded) &&
      typeof recorded.secret_access_key === 'string' &&
      recorded.secret_access_key !== MASKED_SECRET_VALUE
    )
      return recorded;
    const { access_key_id, secret_access_key } = fixture ?? this.target.fullAccessKey;
    return { access_key_id, secret_access_key };
  }

  /**
   * A destination's storage made to work here: an endpoint the objstore does not serve (another
   * instance's, a self-hosted store's) becomes the objstore's, and a bucket the upstream accepted
   * is created in the objstore when it is not there.
   */
  private async prepareDestination(body: unknown, recordedStatus: number): Promise<string[]> {
    if (!isRecord(body) || body.credentials === undefined || !isRecord(body.config)) return [];
    const { config } = body;
    if (
      typeof config.endpoint_url === 'string' &&
      config.endpoint_url !== '' &&
      !(await this.target.servedByObjstore(config.endpoint_url))
    ) {
      config.endpoint_url = this.target.objstoreEndpoint;
    }
    if (typeof config.bucket_name !== 'string' || recordedStatus < 200 || recordedStatus > 299) return [];
    const problem = await this.target.ensureBucket(config.bucket_name);
    return problem === null ? [] : [problem];
  }
}

async function replay(log: HarLog, target: Target, workspace: string | undefined): Promise<VerifyReport> {
  const run = new Replay(target, log.entries, workspace);
  const results: ExchangeVerdict[] = [];
  for (const [index, entry] of log.entries.entries()) results.push(await run.exchange(entry, index));
  const count = (outcome: Outcome) => results.filter((result) => result.outcome === outcome).length;
  return {
    exchanges: results.length,
    same: count('same'),
    drift: count('drift'),
    notComparable: count('not comparable'),
    skipped: count('skipped'),
    results,
    ids: run.mappedIds,
  };
}

const summaryLine = (report: VerifyReport) =>
  `${report.exchanges} exchanges: ${report.same} same, ${report.drift} drift, ${report.notComparable} not ` +
  `comparable, ${report.skipped} skipped`;

/** The exchanges that differ or cannot be compared, a line per reason, then the summary line. */
export function formatVerifyReport(report: VerifyReport): string {
  const rows = report.results
    .filter((result) => result.outcome === 'drift' || result.outcome === 'not comparable')
    .flatMap((result) =>
      result.reasons.map((reason, line) => {
        const why = result.outcome === 'not comparable' && line === 0 ? `not comparable: ${reason}` : reason;
        return line === 0 ? [String(result.index), result.method, result.path, why] : ['', '', '', why];
      }),
    );
  if (rows.length === 0) return `${summaryLine(report)}\n`;
  const table = [['#', 'method', 'path', 'what differs'], ...rows];
  const widths = [0, 1, 2].map((column) => Math.max(...table.map((row) => row[column]!.length)));
  const lines = table.map((row) =>
    [row[0]!.padStart(widths[0]!), row[1]!.padEnd(widths[1]!), row[2]!.padEnd(widths[2]!), row[3]].join('  ').trimEnd(),
  );
  return `${lines.join('\n')}\n${summaryLine(report)}\n`;
}
