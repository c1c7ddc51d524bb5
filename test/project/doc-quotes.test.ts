import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { start, type Localplane } from '../../src/index.ts';
import { REPO_ROOT } from '../support/cli.ts';
import { cliCreateBody, codehostDeploymentBody } from '../support/deployments.ts';
import { DOC_FILES, escapeRegExp, shapeDiffers } from '../support/doc-blocks.ts';
import { exportClient, statuses } from '../support/exports.ts';
import { sendRaw } from '../support/http-client.ts';
import { inProcessApi } from '../support/in-process.ts';
import {
  credentialsOf,
  eventually,
  fullKey,
  noCreateKey,
  useLocalplane,
  workspaceByTier,
} from '../support/instance.ts';
import type { FixtureWorkspace } from '../support/instance.ts';
import { rawRequest, type Credentials, type RawResponse } from '../support/objstore-server.ts';
import { presignedPath, sendSigned, xmlElement, type SignedRequest } from '../support/signed-requests.ts';

/**
 * Every answer README.md and docs/ quote inline is the answer a real instance gives: each code span holding an error
 * body (`{"detail": ...}`, optionally after its status), and each other code span right after a status (404
 * `NoSuchKey`, 422 `uuid_parsing`, 400 `Invalid offset: ...`). Each concrete quote is provoked by the requests of the
 * table below and compared with the answer: an error body's `detail` (`<id>`, `<name>` and the other placeholders stand
 * for any value, `...` and `…` for any text), an S3 error code with the `<Code>` of the objstore's XML error, a
 * pydantic error type with the `type` of an item of a 422's detail, any other text with the `detail`; its status too
 * (the doc's, right before the quote, or the table's). A quote that only shows the shape of some answers is listed with
 * why. A quote in no list fails, as does an entry whose quote is gone. Where a page gives one quote for several causes,
 * each entry names its cause by words of the sentence around the quote. The fenced blocks are
 * test/project/doc-blocks.test.ts's.
 */

interface Quote {
  file: string;
  /** The line of the code span's opening backtick, from 1. */
  line: number;
  /** The code span's text: an error body from `{"detail"` on, or the answer a status right before the span names. */
  quote: string;
  /** The status the doc gives right before the quote (or in the span, before the body). */
  status?: number;
  /** The sentence that holds the span, on one line: a list item, a table cell and a paragraph end one too. */
  sentence: string;
}

const CODE_SPAN_STATUS = /^([1-5]\d{2}) +(?=\{"detail")/;
/** A status right before a span: `is 404 `, `**409**` and a line break, `the 400 `, `is 409 (`, `507, `. */
const STATUS_BEFORE = /(?:^|[\s(])\**([1-5]\d{2})\**,?\s*\(?$/;
/** Where a sentence ends, code spans masked: a stop before a capital or a span, a blank line, a list item, a cell. */
const SENTENCE_END = /[.!?](?=\s+[A-Z`])|\n\s*\n|\n(?=\s*(?:[-*+]|\d+\.)\s)|\|/g;

/** The sentence of `prose` around `from`..`to`, found in `masked` (the prose, its code spans backticks alone). */
function sentenceAround(prose: string, masked: string, from: number, to: number): string {
  let start = 0;
  for (const end of masked.slice(0, from).matchAll(SENTENCE_END)) start = end.index + end[0].length;
  const after = masked.slice(to).search(SENTENCE_END);
  return prose
    .slice(start, after < 0 ? prose.length : to + after + 1)
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(?:[-*+] |\d+\. )/, '')
    .replace(/ ?\|$/, '');
}

/**
 * The inline code spans of a page that hold an error body, or come right after a status, outside its fenced blocks (a
 * span may go over lines within a paragraph, as CommonMark reads it).
 */
function quotesIn(file: string, page: string): Quote[] {
  const lines = page.split('\n');
  let fenced = false;
  // Fenced lines are blanked, so that a span never runs into a block and line numbers stay.
  const prose = lines
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
  const spans: { from: number; to: number; text: string }[] = [];
  const run = /`+/g;
  for (let opening = run.exec(prose); opening; opening = run.exec(prose)) {
    const ticks = opening[0];
    const start = opening.index + ticks.length;
    // The closing run has as many backticks; a blank line ends the paragraph first.
    const closing = new RegExp(`(?<!\`)${ticks}(?!\`)|\\n\\s*\\n`, 'g');
    closing.lastIndex = start;
    const end = closing.exec(prose);
    if (!end || end[0] !== ticks) continue;
    run.lastIndex = end.index + ticks.length;
    // A line break and the indentation around it are one space, as CommonMark reads a paragraph.
    const text = prose.slice(start, end.index).replace(/[ \t]*\n[ \t]*/g, ' ');
    spans.push({ from: opening.index, to: run.lastIndex, text: /^ .*[^ ].* $/.test(text) ? text.slice(1, -1) : text });
  }
  const masked = spans.reduce(
    (text, span) =>
      text.slice(0, span.from) + text.slice(span.from, span.to).replace(/[^\n]/g, '`') + text.slice(span.to),
    prose,
  );
  return spans.flatMap(({ from, to, text }) => {
    const inSpan = CODE_SPAN_STATUS.exec(text);
    const quote = text.slice(inSpan ? inSpan[0].length : 0);
    const before = STATUS_BEFORE.exec(prose.slice(Math.max(0, from - 20), from));
    // An error body wherever it is; any other span only right after a status.
    if (quote.startsWith('{') ? !quote.startsWith('{"detail"') : !before) return [];
    const status = inSpan?.[1] ?? before?.[1];
    return [
      {
        file,
        line: prose.slice(0, from).split('\n').length,
        quote,
        ...(status === undefined ? {} : { status: Number(status) }),
        sentence: sentenceAround(prose, masked, from, to),
      },
    ];
  });
}

const QUOTES = DOC_FILES.flatMap((file) => quotesIn(file, readFileSync(join(REPO_ROOT, file), 'utf8')));

/** What each list names: a quote of a page and, where the page gives it for several causes, the cause's words. */
interface Entry {
  file: string;
  quote: string;
  /** Words of the sentence around the one quote meant, where the page gives the quote for several causes. */
  cause?: string;
}

const keyOf = (entry: Entry) => `${entry.file}: ${entry.quote}${entry.cause === undefined ? '' : ` (${entry.cause})`}`;
const names = (entry: Entry, quote: Quote) =>
  entry.file === quote.file &&
  entry.quote === quote.quote &&
  (entry.cause === undefined || quote.sentence.includes(entry.cause));

/** An S3 error code (`NoSuchKey`): the `<Code>` of the objstore's XML error. */
const S3_ERROR_CODE = /^[A-Z][A-Za-z0-9]+$/;
/** A pydantic error type (`uuid_parsing`): the `type` of an item of a 422's detail. */
const ERROR_TYPE = /^[a-z]+(?:_[a-z]+)*$/;

/** What a quote is, as the counts tell them apart: any other text is the `detail` of the answer. */
const kindOf = (quote: string) =>
  quote.startsWith('{')
    ? 'error_bodies'
    : S3_ERROR_CODE.test(quote)
      ? 's3_error_codes'
      : ERROR_TYPE.test(quote)
        ? 'error_types'
        : 'details';

/**
 * Values a quote leaves to the reader: each stands for one value (text without spaces, not ending in `.`, `,`, `:` or
 * `;`; `<ids>` a list of them joined with `, `), so that a quote missing a word or a stop beside one (`Deployment <id>`
 * for `Deployment ID <id>`) still differs. `...`, `…` and `<the storage's words>` stand for any text.
 */
const PLACEHOLDERS = [
  '<id>',
  '<ids>',
  '<name>',
  '<url>',
  '<path>',
  '<workspace id>',
  '<compute id>',
  '<field>',
  '<key>',
  '<bucket>',
  '<host:port>',
];

/** Stand-ins for any text. */
const TEXTS = ['...', '…', "<the storage's words>"];

/** One value: no spaces, and not ending in the punctuation that follows one. */
const VALUE = String.raw`\S*[^\s.,:;]`;

/** Whether an answer's body is `{"detail": <the text>}`, its placeholders and `...` filled in. */
function detailDiffers(text: string, body: unknown): string | undefined {
  if (body === null || typeof body !== 'object' || Object.keys(body).join() !== 'detail')
    return `an answer of {"detail"} alone in the doc, ${JSON.stringify(body)} here`;
  const detail = (body as { detail: unknown }).detail;
  const wildcards = new RegExp(`(${[...PLACEHOLDERS, ...TEXTS].map(escapeRegExp).join('|')})`);
  const pattern = text
    .split(wildcards)
    .map((part, index) =>
      index % 2 === 0
        ? escapeRegExp(part)
        : part === '<ids>'
          ? `${VALUE}(?:, ${VALUE})*`
          : PLACEHOLDERS.includes(part)
            ? VALUE
            : '.*',
    )
    .join('');
  return typeof detail === 'string' && new RegExp(`^${pattern}$`, 's').test(detail)
    ? undefined
    : `detail: ${JSON.stringify(text)} in the doc, ${JSON.stringify(detail)} here`;
}

/** Whether an answer's body is the quote's: `undefined` if it is, else where it differs. */
function quoteDiffers(quote: string, body: unknown): string | undefined {
  switch (kindOf(quote)) {
    case 'error_bodies': {
      const text = /^\{"detail": "(.*)"\}$/s.exec(quote);
      if (text) return detailDiffers(text[1]!, body);
      // A detail that is not a string: the quote as JSON, a trailing `...` of an object standing for any other keys.
      const doc: unknown = JSON.parse(quote.replace(/,\s*(?:\.\.\.|…)\s*\}/g, ', "...": "..."}'));
      return shapeDiffers(doc, body, true);
    }
    case 's3_error_codes': {
      const code = typeof body === 'string' ? xmlElement(body, 'Code') : undefined;
      return code === quote ? undefined : `<Code>${quote}</Code> in the doc, ${JSON.stringify(body)} here`;
    }
    case 'error_types': {
      const detail = (body as { detail?: unknown } | undefined)?.detail;
      const types = Array.isArray(detail) ? detail.map((item) => (item as { type?: unknown }).type) : [];
      return types.includes(quote) ? undefined : `an item of type ${quote} in the doc, ${JSON.stringify(body)} here`;
    }
    default:
      // A text, in double quotes or not.
      return detailDiffers(quote.replace(/^"(.*)"$/s, '$1'), body);
  }
}

const ctx = useLocalplane({ freezeClock: true });
const acme = () => workspaceByTier(ctx.fixtures, 'plus');
const globex = () => workspaceByTier(ctx.fixtures, 'enterprise');
const UNKNOWN_ID = '00000000-0000-4000-8000-00000000d0c5';

interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
}

/** A request through the instance in process, as a workspace when `as` names one. */
const call = (
  method: string,
  path: string,
  options: { as?: FixtureWorkspace; body?: unknown; raw?: Uint8Array; headers?: Record<string, string> } = {},
): Promise<Answer> => inProcessApi(ctx.instance, options.as).call(method, path, options.body, options);

/** Bytes sent to the API as JSON as they are (malformed, too deep, a lone surrogate). */
const sendJsonText = (method: string, path: string, text: string, as = acme()) =>
  call(method, path, { as, raw: new TextEncoder().encode(text), headers: { 'content-type': 'application/json' } });

/** A response of the API over HTTP as an answer, its body parsed. */
async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** A call that must succeed (2xx), answering its body. */
async function made<T = { id: string }>(...args: Parameters<typeof call>): Promise<T> {
  const answer = await call(...args);
  expect(answer.status, `${args[0]} ${args[1]}: ${JSON.stringify(answer.body)}`).toBeLessThan(300);
  return answer.body as T;
}

const admin = (method: string, path: string, body?: unknown) => made(method, `/_localplane${path}`, { body });

async function destination(workspace: FixtureWorkspace, prefix: string) {
  const created = await made('POST', '/api/v1/bulk-exports/destinations', {
    as: workspace,
    body: {
      display_name: prefix,
      config: { bucket_name: 'exports', prefix, endpoint_url: ctx.fixtures.objstore.endpoint_url },
      credentials: credentialsOf(fullKey(ctx.fixtures)),
    },
  });
  return created.id;
}

const destinationWithEndpoint = (endpointUrl: string, key = fullKey(ctx.fixtures)) =>
  call('POST', '/api/v1/bulk-exports/destinations', {
    as: acme(),
    body: {
      display_name: 'doc-quotes',
      config: { bucket_name: 'exports', prefix: 'doc-quotes', endpoint_url: endpointUrl },
      credentials: credentialsOf(key),
    },
  });

const deploymentOf = (workspace: FixtureWorkspace, source: string) =>
  workspace.deployments.find((deployment) => deployment.source === source)!.id;

const listenerBody = (computeId: string) => ({
  compute_type: 'k8s',
  compute_id: computeId,
  compute_config: { k8s_namespaces: ['graphs'] },
});

const onListenerBody = (name: string, listenerId: string) => ({
  name,
  source: 'external_container',
  source_config: { listener_id: listenerId, listener_config: { k8s_namespace: 'graphs' } },
  source_revision_config: { image_uri: 'registry.example/agent:1' },
  secrets: [],
});

const fullCredentials = (): Credentials => {
  const key = fullKey(ctx.fixtures);
  return { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key };
};

/** An objstore response as an answer, its body the XML text. */
const fromRaw = (reply: RawResponse): Answer => ({
  status: reply.status,
  body: reply.body,
  headers: new Headers(Object.entries(reply.headers).map(([name, value]): [string, string] => [name, String(value)])),
});

/** A request to the instance's objstore (`objstoreUrl` for another's), signed with the full-rights fixture key. */
const s3 = async (request: SignedRequest, objstoreUrl = ctx.instance.objstoreUrl) =>
  fromRaw(await sendSigned(objstoreUrl, fullCredentials(), request));

/** A request to the objstore sent as given, unsigned. */
const anonymous = async (method: string, path: string, headers: Record<string, string> = {}) =>
  fromRaw(await rawRequest(ctx.instance.objstoreUrl, method, path, headers));

/** The object of `exports` the objstore quotes read, ten bytes, put anew. */
const OBJECT = '/exports/doc-quotes/object.txt';
async function putObject(): Promise<void> {
  expect((await s3({ method: 'PUT', path: OBJECT, body: '0123456789' })).status).toBe(200);
}

/** A request of the object, put anew first. */
async function ofObject(request: Omit<SignedRequest, 'path'>): Promise<Answer> {
  await putObject();
  return s3({ ...request, path: OBJECT });
}

/** A DeleteObjects of the object's key: `document` as the body, with its Content-MD5 unless `headers` say another. */
const deleteObjects = (document: string, headers: Record<string, string> = {}) =>
  s3({
    method: 'POST',
    path: '/exports',
    query: { delete: '' },
    headers: { 'content-md5': createHash('md5').update(document).digest('base64'), ...headers },
    body: document,
  });

const DELETE_THE_OBJECT = '<Delete><Object><Key>doc-quotes/object.txt</Key></Object></Delete>';

/** A multipart upload of `exports` in progress with one part uploaded, for `work`; aborted after. */
async function inMultipartUpload(
  work: (upload: { path: string; uploadId: string; etag: string }) => Promise<Answer>,
): Promise<Answer> {
  const path = '/exports/doc-quotes/upload.bin';
  const created = await s3({ method: 'POST', path, query: { uploads: '' } });
  const uploadId = xmlElement(created.body as string, 'UploadId')!;
  try {
    const part = await s3({ method: 'PUT', path, query: { partNumber: '1', uploadId }, body: 'the one part' });
    return await work({ path, uploadId, etag: part.headers.get('etag')! });
  } finally {
    expect((await s3({ method: 'DELETE', path, query: { uploadId } })).status).toBe(204);
  }
}

/** The upload of `inMultipartUpload` completed with its one part, sending `headers` (a checksum of the whole). */
const completedWith = (headers: Record<string, string>) =>
  inMultipartUpload(({ path, uploadId, etag }) =>
    s3({
      method: 'POST',
      path,
      query: { uploadId },
      headers,
      body:
        `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${etag}</ETag></Part>` +
        '</CompleteMultipartUpload>',
    }),
  );

/**
 * A second instance, of memory storage, started for the quotes of its budget (the file's own keeps files: SQL and
 * previews need them), its budget 1 MiB; stopped after the file.
 */
let memoryInstance: Promise<Localplane> | undefined;
const withMemoryStorage = () =>
  (memoryInstance ??= (async () => {
    const instance = await start({ port: 0, objstorePort: 0, objstoreStorage: 'memory', log: () => {} });
    const patched = await instance.request('/_localplane/config', {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ objstore_memory_limit_mb: 1 }),
    });
    expect(patched.status).toBe(200);
    return instance;
  })());
afterAll(async () => (await memoryInstance)?.stop());

/** A PutObject of 2 MiB to the memory storage of 1 MiB. */
const pastTheMemoryBudget = async () =>
  s3(
    { method: 'PUT', path: '/exports/doc-quotes/too-big.bin', body: Buffer.alloc(2 * 1024 * 1024) },
    (await withMemoryStorage()).objstoreUrl,
  );

/** An export of acme's that has written its Parquet files, for SQL over them; made once. */
let sqlExport: Promise<string> | undefined;
const exportWithFiles = () =>
  (sqlExport ??= (async () => {
    const exports = exportClient(ctx, acme);
    const destinationId = await exports.createDestination('doc-quotes-sql');
    const id = await exports.startExport(destinationId, 'support-bot-staging', {
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
    });
    await admin('POST', '/clock/advance', { seconds: 0 });
    expect(statuses(await exports.getRuns(id))).toEqual(['Completed']);
    return id;
  })());

const sql = async (text: string) =>
  call('POST', '/_localplane/sql', { body: { export_id: await exportWithFiles(), sql: text } });

/**
 * Creates exports of globex's first session (`window` their end or interval) to a new destination one after another
 * until one is refused, expecting `most` made first; answers the refusal. Globex is reset after: the default limits
 * themselves are reached, in a workspace of their own (a create is a few milliseconds in process).
 */
async function globexExportsRefusedAfter(most: number, prefix: string, window: Record<string, unknown>) {
  const workspace = globex();
  try {
    const body = {
      bulk_export_destination_id: await destination(workspace, prefix),
      session_id: workspace.sessions[0]!.id,
      start_time: '2026-10-01T00:00:00Z',
      ...window,
    };
    for (let created = 0; created <= most; created++) {
      const answer = await call('POST', '/api/v1/bulk-exports', { as: workspace, body });
      if (answer.status === 200) continue;
      expect(created).toBe(most);
      return answer;
    }
    throw new Error(`${most + 1} exports created, none refused`);
  } finally {
    await admin('POST', '/reset', { workspace_id: workspace.id, keep_clock: true });
  }
}

interface Provoked extends Entry {
  /** The status, where the doc gives none right before the quote (one of the two must). */
  status?: number;
  /** Sends the request that answers the quote (and what it needs first), and puts back what it changed. */
  answer: () => Promise<Answer>;
  /** What the doc says of the answer beside the quote. */
  also?: (answer: Answer) => void;
}

/** Each concrete quote and the requests that provoke it. */
const PROVOKED: Provoked[] = [
  {
    file: 'docs/deployments.md',
    quote: '{"detail": "Deployment ID <id> not found."}',
    answer: () => call('GET', `/v2/deployments/${UNKNOWN_ID}`, { as: acme() }),
  },
  {
    file: 'docs/deployments.md',
    quote: '{"detail": "A tracing project named <name> already exists in this workspace."}',
    answer: () =>
      call('POST', '/v2/deployments', { as: acme(), body: codehostDeploymentBody(acme(), 'support-bot-staging') }),
  },
  {
    file: 'docs/deployments.md',
    quote: '{"detail": "Source configuration error: ..."}',
    answer: () =>
      call('POST', '/v2/deployments', {
        as: acme(),
        body: codehostDeploymentBody(acme(), 'doc-quotes-source', { source_config: { integration_id: UNKNOWN_ID } }),
      }),
  },
  {
    file: 'docs/deployments.md',
    quote: '{"detail": "Source configuration error: source_tarball_path <path> was never uploaded. ..."}',
    answer: () =>
      call('POST', '/v2/deployments', {
        as: acme(),
        body: {
          name: 'doc-quotes-tarball',
          source: 'internal_source',
          source_config: { deployment_type: 'dev' },
          source_revision_config: {
            source_tarball_path: `${acme().id}/${UNKNOWN_ID}/${UNKNOWN_ID}.tar.gz`,
            graph_config_path: 'graph.json',
          },
          secrets: [],
        },
      }),
  },
  {
    file: 'docs/deployments.md',
    quote: '{"detail": "OAuth provider <id> already exists."}',
    answer: () =>
      call('POST', '/v2/auth/providers', {
        as: acme(),
        body: {
          provider_id: 'codehost',
          name: 'Codehost again',
          client_id: 'doc-quotes',
          auth_url: 'https://codehost.example/login/oauth/authorize',
          token_url: 'https://codehost.example/login/oauth/access_token',
        },
      }),
  },
  {
    file: 'docs/deployments.md',
    quote: '{"detail": "OAuth provider <id> not found."}',
    answer: () => call('GET', '/v2/auth/providers/doc-quotes-nowhere', { as: acme() }),
  },
  {
    file: 'docs/deployments.md',
    quote:
      `{"detail": "Listeners cannot be created for the service workspace ID '<workspace id>'. Creating listeners is ` +
      'only allowed for the service organizations with self-hosted enterprise plans."}',
    answer: () => call('POST', '/v2/listeners', { as: acme(), body: listenerBody('doc-quotes-refused') }),
  },
  {
    file: 'docs/deployments.md',
    quote: '{"detail": "Listener ID <id> is used by deployment(s) <ids>. Delete those deployments first."}',
    async answer() {
      const listener = await made('POST', '/v2/listeners', { as: globex(), body: listenerBody('doc-quotes-in-use') });
      const deployment = await made('POST', '/v2/deployments', {
        as: globex(),
        body: onListenerBody('doc-quotes-on-a-listener', listener.id),
      });
      const refused = await call('DELETE', `/v2/listeners/${listener.id}`, { as: globex() });
      await made('DELETE', `/v2/deployments/${deployment.id}`, { as: globex() });
      await made('DELETE', `/v2/listeners/${listener.id}`, { as: globex() });
      return refused;
    },
  },
  {
    file: 'docs/deployments.md',
    quote: '{"detail": "Listener ID <id> not found."}',
    answer: () => call('GET', `/v2/listeners/${UNKNOWN_ID}`, { as: globex() }),
  },
  {
    file: 'docs/deployments.md',
    quote: `{"detail": "upload url is not available for 'external_container' source deployments"}`,
    answer: () =>
      call('POST', `/v2/deployments/${deploymentOf(globex(), 'external_container')}/upload-url`, { as: globex() }),
  },
  {
    file: 'docs/deployments.md',
    quote: `{"detail": "push token is only available for 'internal_container' source deployments"}`,
    answer: () => call('POST', `/v2/deployments/${deploymentOf(acme(), 'codehost')}/push-token`, { as: acme() }),
  },
  {
    file: 'docs/deployments.md',
    quote: '{"detail": "Deployment ID <id> is being deleted."}',
    async answer() {
      await admin('PATCH', '/config', { deployment_deletion_seconds: 60 });
      try {
        const deployment = await made('POST', '/v2/deployments', {
          as: acme(),
          body: codehostDeploymentBody(acme(), 'doc-quotes-deleting'),
        });
        expect((await call('DELETE', `/v2/deployments/${deployment.id}`, { as: acme() })).status).toBe(204);
        return await call('PATCH', `/v2/deployments/${deployment.id}`, { as: acme(), body: { build_on_push: true } });
      } finally {
        await admin('PATCH', '/config', { deployment_deletion_seconds: 0 });
      }
    },
  },
  {
    file: 'docs/errors.md',
    quote: '{"detail": "Method Not Allowed"}',
    answer: () => call('PUT', '/api/v1/bulk-exports', { as: acme(), body: {} }),
    also: (answer) => expect(answer.headers.get('allow')).toBe('GET, HEAD, POST'),
  },
  {
    file: 'docs/errors.md',
    quote: '{"detail": "Not Found"}',
    answer: () => call('GET', '/api/v1/doc-quotes', { as: acme() }),
  },
  {
    file: 'docs/errors.md',
    quote: '{"detail": "There was an error parsing the body"}',
    answer: () =>
      call('POST', '/api/v1/bulk-exports', {
        as: acme(),
        raw: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]),
        headers: { 'content-type': 'application/json' },
      }),
  },
  {
    file: 'docs/exports.md',
    quote: '{"detail": "Bulk export <id> not found"}',
    answer: () => call('GET', `/api/v1/bulk-exports/runs?source_bulk_export_id=${UNKNOWN_ID}`, { as: acme() }),
  },
  {
    file: 'docs/exports.md',
    quote:
      '{"detail": [{"type": "value_error", "loc": ["body"], "msg": "Value error, Exactly one of session_id or ' +
      'all_experiments must be set", ...}]}',
    answer: () =>
      call('POST', '/api/v1/bulk-exports', {
        as: acme(),
        body: {
          bulk_export_destination_id: UNKNOWN_ID,
          session_id: acme().sessions[0]!.id,
          all_experiments: true,
          start_time: '2026-10-01T00:00:00Z',
          end_time: '2026-10-02T00:00:00Z',
        },
      }),
  },
  {
    file: 'docs/fixtures.md',
    quote:
      '{"detail": "Failed to discover OAuth metadata for MCP server <url>: no OAuth authorization server metadata ' +
      'was found at the server."}',
    answer: () =>
      call('POST', '/v2/auth/providers/mcp-discover', {
        as: acme(),
        body: { provider_id: 'doc-quotes-mcp', name: 'Nowhere', mcp_server_url: 'https://mcp.nowhere.example/mcp' },
      }),
  },
  {
    file: 'docs/journal-and-faults.md',
    quote: '{"detail": "At most 16 journal streams are open at once: close one and try again"}',
    async answer() {
      const streamUrl = `${ctx.instance.apiUrl}/_localplane/requests/stream`;
      const open = await Promise.all(Array.from({ length: 16 }, () => fetch(streamUrl)));
      try {
        expect(open.map((response) => response.status)).toEqual(Array.from({ length: 16 }, () => 200));
        return await answerOf(await fetch(streamUrl));
      } finally {
        await Promise.all(open.map((response) => response.body!.cancel()));
        // Streams are let go as their connections close: the next test file's worker finds none of these.
        const reopened = await eventually(async () => {
          const response = await fetch(streamUrl);
          if (response.status !== 200) await response.body?.cancel();
          return response.status === 200 && response;
        }, 'a journal stream to be let go');
        await reopened.body!.cancel();
      }
    },
  },
  {
    file: 'docs/journal-and-faults.md',
    quote: '{"detail": "Fault rule ... not found"}',
    answer: () => call('DELETE', '/_localplane/fault-rules/fault-rule-404'),
  },
  {
    file: 'docs/limits.md',
    quote:
      '{"detail": "Rate limit exceeded: a workspace may create at most 250 bulk exports per hour. Try again later."}',
    answer: () => globexExportsRefusedAfter(250, 'doc-quotes-hourly', { end_time: '2026-10-02T00:00:00Z' }),
    also: (answer) => expect(answer.headers.get('retry-after')).toMatch(/^\d+$/),
  },
  {
    file: 'docs/limits.md',
    quote:
      '{"detail": "Too many recurring bulk exports: a workspace may have at most 200 active at once. Cancel one ' +
      'before creating another."}',
    answer: () => globexExportsRefusedAfter(200, 'doc-quotes-recurring', { interval_hours: 24 }),
  },
  {
    file: 'docs/objstore.md',
    quote: '{"detail": "Bucket <name> not found"}',
    answer: () => call('GET', '/_localplane/objstore/buckets/doc-quotes/object?key=a'),
  },
  {
    file: 'docs/objstore.md',
    quote: '{"detail": "Object <key> not found in bucket <bucket>"}',
    answer: () => call('GET', '/_localplane/objstore/buckets/exports/object?key=doc-quotes/none'),
  },
  {
    file: 'docs/objstore.md',
    quote: '{"detail": "Failed to validate objstore destination: Invalid endpoint: <url>"}',
    answer: () => destinationWithEndpoint('https://storage.googleapis.com/my-bucket'),
  },
  {
    file: 'docs/objstore.md',
    quote:
      '{"detail": "Failed to validate objstore destination: Invalid endpoint: <url>: localplane sends only to ' +
      'loopback, its own objstore and the production endpoints it serves; start it with --allow-endpoints ' +
      '<host:port> (LOCALPLANE_ALLOW_ENDPOINTS) to send there"}',
    answer: () => destinationWithEndpoint('https://minio.corp.example:9000'),
  },
  {
    file: 'docs/openapi.md',
    quote: '{"detail": "Prefer code=418 is not an error response of this endpoint; it documents: 401, 403"}',
    status: 400,
    answer: () => call('GET', '/api/v1/bulk-exports/destinations', { as: acme(), headers: { prefer: 'code=418' } }),
  },
  {
    file: 'docs/objstore.md',
    quote: `{"detail": "The objstore's memory storage is full: ..."}`,
    answer: async () =>
      inProcessApi(await withMemoryStorage()).call(
        'PUT',
        '/_localplane/objstore/buckets/exports/object?key=doc-quotes/too-big.bin',
        undefined,
        { raw: new Uint8Array(2 * 1024 * 1024) },
      ),
    also: (answer) => expect((answer.body as { detail: string }).detail).toContain('objstore_memory_limit_mb'),
  },
  // The answers named after a status: S3's error codes, pydantic's error types and details.
  {
    file: 'docs/admin-api.md',
    quote: 'greater_than',
    answer: () => call('POST', `/_localplane/sessions/${acme().sessions[0]!.id}/runs`, { body: { count: 1, days: 0 } }),
  },
  {
    file: 'docs/deployments.md',
    quote: 'uuid_parsing',
    cause: 'a malformed uuid',
    answer: () => call('GET', '/v2/deployments/not-a-uuid', { as: acme() }),
  },
  {
    file: 'docs/deployments.md',
    quote: '"<field> cannot be changed once the deployment is created."',
    answer: () =>
      call('PATCH', `/v2/deployments/${deploymentOf(acme(), 'codehost')}`, {
        as: acme(),
        body: { name: 'doc-quotes' },
      }),
  },
  {
    file: 'docs/deployments.md',
    quote: 'Source configuration error: ...',
    answer: () =>
      call('PATCH', `/v2/deployments/${deploymentOf(globex(), 'external_container')}`, {
        as: globex(),
        body: { revision_source: 'internal_container', source_revision_config: { image_uri: 'registry.example/x:1' } },
      }),
  },
  {
    file: 'docs/deployments.md',
    quote: "Listener for the service workspace ID '<workspace id>' and compute ID '<compute id>' already exists.",
    async answer() {
      const listener = await made('POST', '/v2/listeners', { as: globex(), body: listenerBody('doc-quotes-twice') });
      const refused = await call('POST', '/v2/listeners', { as: globex(), body: listenerBody('doc-quotes-twice') });
      await made('DELETE', `/v2/listeners/${listener.id}`, { as: globex() });
      return refused;
    },
  },
  {
    file: 'docs/deployments.md',
    quote: 'uuid_parsing',
    cause: 'Listener ID <id> not found',
    answer: () => call('GET', '/v2/listeners/not-a-uuid', { as: globex() }),
  },
  {
    file: 'docs/deployments.md',
    quote: 'Source configuration error: listener_id <id> is not a listener of this workspace.',
    async answer() {
      const listener = await made('POST', '/v2/listeners', { as: globex(), body: listenerBody('doc-quotes-deleted') });
      await made('DELETE', `/v2/listeners/${listener.id}`, { as: globex() });
      return call('POST', '/v2/deployments', {
        as: globex(),
        body: onListenerBody('doc-quotes-on-a-deleted-listener', listener.id),
      });
    },
  },
  {
    file: 'docs/deployments.md',
    quote: 'Deployment ID <id> not found.',
    answer: () =>
      call('POST', `/v2/deployments/${deploymentOf(globex(), 'external_container')}/upload-url`, { as: acme() }),
  },
  {
    file: 'docs/deployments.md',
    quote: 'SignatureDoesNotMatch',
    async answer() {
      const deployment = await made('POST', '/v2/deployments', {
        as: acme(),
        body: cliCreateBody('doc-quotes-upload', 'internal_source', []),
      });
      try {
        const upload = await made<{ upload_url: string }>('POST', `/v2/deployments/${deployment.id}/upload-url`, {
          as: acme(),
        });
        // A GET of the URL signed for the tarball's PUT.
        const { origin, pathname, search } = new URL(upload.upload_url);
        return fromRaw(await rawRequest(origin, 'GET', `${pathname}${search}`));
      } finally {
        await made('DELETE', `/v2/deployments/${deployment.id}`, { as: acme() });
      }
    },
  },
  {
    file: 'docs/deployments.md',
    quote: 'Invalid offset: ...',
    answer: () =>
      call('POST', `/v1/projects/${deploymentOf(acme(), 'codehost')}/deploy_logs`, {
        as: acme(),
        body: { offset: 'nope' },
      }),
  },
  {
    file: 'docs/errors.md',
    quote: 'uuid_parsing',
    answer: () => call('GET', '/api/v1/bulk-exports/not-a-uuid', { as: acme() }),
  },
  {
    file: 'docs/errors.md',
    quote: 'model_attributes_type',
    answer: () =>
      call('POST', '/api/v1/bulk-exports/destinations', {
        as: acme(),
        raw: new TextEncoder().encode('{}'),
        headers: { 'content-type': 'text/plain' },
      }),
  },
  {
    file: 'docs/errors.md',
    quote: 'json_invalid',
    cause: 'malformed JSON',
    answer: () => sendJsonText('POST', '/api/v1/bulk-exports/destinations', '{"display_name": }'),
  },
  {
    file: 'docs/errors.md',
    quote: 'string_unicode',
    answer: () => sendJsonText('POST', '/v2/deployments', String.raw`{"name": "bot-\ud800"}`),
  },
  {
    file: 'docs/errors.md',
    quote: 'json_invalid',
    cause: 'deeper than **64** levels',
    answer: () =>
      sendJsonText('POST', '/api/v1/bulk-exports/destinations', `{"a": ${'['.repeat(65)}${']'.repeat(65)}}`),
    also: (answer) =>
      expect((answer.body as { detail: { ctx: unknown }[] }).detail[0]!.ctx).toEqual({
        error: 'Nesting deeper than 64 levels',
      }),
  },
  {
    file: 'docs/errors.md',
    quote: 'Invalid HTTP request received.',
    async answer() {
      // A malformed request line, one of the requests the sentence names: Node's parser refuses it.
      const reply = await sendRaw(ctx.instance.apiUrl, 'garbage\r\n\r\n');
      return { status: reply.status, body: reply.json, headers: new Headers(reply.headers) };
    },
  },
  {
    file: 'docs/exports.md',
    quote: 'missing',
    answer: () => call('GET', '/api/v1/bulk-exports/runs', { as: acme() }),
  },
  {
    file: 'docs/exports.md',
    quote: 'uuid_parsing',
    answer: () => call('GET', '/api/v1/bulk-exports/runs?source_bulk_export_id=not-a-uuid', { as: acme() }),
  },
  {
    file: 'docs/exports.md',
    quote: "Failed to validate objstore destination: <the storage's words>",
    answer: () => destinationWithEndpoint(ctx.fixtures.objstore.endpoint_url, noCreateKey(ctx.fixtures)),
  },
  {
    file: 'docs/limits.md',
    quote: 'InsufficientStorage',
    answer: pastTheMemoryBudget,
  },
  {
    file: 'docs/objstore.md',
    quote: 'InsufficientStorage',
    answer: pastTheMemoryBudget,
    also: (answer) => expect(xmlElement(answer.body as string, 'Message')).toContain('objstore_memory_limit_mb'),
  },
  {
    file: 'docs/objstore.md',
    quote: 'KeyTooLongError',
    answer: () => s3({ method: 'PUT', path: `/exports/${'k'.repeat(1025)}`, body: 'x' }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'InvalidPartNumber',
    answer: () => ofObject({ method: 'GET', query: { partNumber: '2' } }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'InvalidRequest',
    cause: 'with a `Range` header',
    answer: () => ofObject({ method: 'GET', query: { partNumber: '1' }, headers: { range: 'bytes=0-1' } }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'InvalidArgument',
    cause: 'a part number outside 1..10000',
    answer: () => ofObject({ method: 'GET', query: { partNumber: '10001' } }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'InvalidRequest',
    cause: 'another algorithm than the object',
    answer: () => completedWith({ 'x-amz-checksum-crc32': 'AAAAAA==' }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'BadDigest',
    answer: () => completedWith({ 'x-amz-checksum-crc64nvme': 'AAAAAAAAAAA=' }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'XAmzContentSHA256Mismatch',
    answer: () =>
      s3({
        method: 'PUT',
        path: OBJECT,
        headers: { 'x-amz-content-sha256': createHash('sha256').update('another body').digest('hex') },
        body: '0123456789',
      }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'NotImplemented',
    cause: 'any other operation with one',
    answer: () => deleteObjects(DELETE_THE_OBJECT, { 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' }),
    also: (answer) => expect(xmlElement(answer.body as string, 'Header')).toBe('x-amz-content-sha256'),
  },
  {
    file: 'docs/objstore.md',
    quote: 'PreconditionFailed',
    answer: () => ofObject({ method: 'GET', headers: { 'if-match': '"0123"' } }),
    also: (answer) => expect(xmlElement(answer.body as string, 'Condition')).toBe('If-Match'),
  },
  {
    file: 'docs/objstore.md',
    quote: 'NoSuchKey',
    answer: () =>
      s3({ method: 'PUT', path: '/exports/doc-quotes/none.txt', headers: { 'if-match': '"0123"' }, body: 'x' }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'NotImplemented',
    cause: 'both at once',
    answer: () =>
      s3({ method: 'PUT', path: OBJECT, headers: { 'if-match': '"0123"', 'if-none-match': '*' }, body: 'x' }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'InvalidRange',
    answer: () => ofObject({ method: 'GET', headers: { range: 'bytes=10-' } }),
    also: (answer) => expect(answer.headers.get('content-range')).toBe('bytes */10'),
  },
  {
    file: 'docs/objstore.md',
    quote: 'InvalidArgument',
    cause: 'A `version-id-marker` without a key marker',
    answer: () => s3({ method: 'GET', path: '/exports', query: { versions: '', 'version-id-marker': 'null' } }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'InvalidArgument',
    cause: 'Invalid version id specified',
    answer: () => ofObject({ method: 'DELETE', query: { versionId: 'doc-quotes' } }),
    also: (answer) => expect(xmlElement(answer.body as string, 'Message')).toBe('Invalid version id specified'),
  },
  {
    file: 'docs/objstore.md',
    quote: 'NoSuchBucket',
    answer: () => anonymous('GET', '/doc-quotes-nowhere/object.txt'),
  },
  {
    file: 'docs/objstore.md',
    quote: 'AccessDenied',
    cause: 'to an existing private bucket',
    async answer() {
      await putObject();
      return anonymous('GET', OBJECT);
    },
  },
  {
    file: 'docs/objstore.md',
    quote: 'InvalidURI',
    answer: () => s3({ method: 'GET', path: '/exports/doc-quotes/%FF' }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'InvalidArgument',
    cause: "UploadPartCopy's `x-amz-copy-source-range` ending past the source",
    async answer() {
      await putObject();
      return inMultipartUpload(({ path, uploadId }) =>
        s3({
          method: 'PUT',
          path,
          query: { partNumber: '2', uploadId },
          headers: { 'x-amz-copy-source': OBJECT, 'x-amz-copy-source-range': 'bytes=0-99' },
        }),
      );
    },
    also: (answer) =>
      expect(xmlElement(answer.body as string, 'Message')).toBe(
        'Range specified is not valid for source object of size: 10',
      ),
  },
  {
    file: 'docs/objstore.md',
    quote: 'MalformedXML',
    // The document's closing tag left out.
    answer: () => deleteObjects(DELETE_THE_OBJECT.replace('</Delete>', '')),
  },
  {
    file: 'docs/objstore.md',
    quote: 'AccessDenied',
    cause: 'An expired one',
    async answer() {
      await putObject();
      const path = await presignedPath(ctx.instance.objstoreUrl, fullCredentials(), {
        method: 'GET',
        path: OBJECT,
        expiresIn: 60,
        signingDate: new Date(Date.now() - 3_600_000),
      });
      return anonymous('GET', path);
    },
    also: (answer) => expect(xmlElement(answer.body as string, 'Message')).toBe('Request has expired'),
  },
  {
    file: 'docs/objstore.md',
    quote: 'AccessDenied',
    cause: 'Cross-origin POST from',
    answer: () => deleteObjects(DELETE_THE_OBJECT, { origin: 'https://evil.example' }),
    also: (answer) =>
      expect(xmlElement(answer.body as string, 'Message')).toBe(
        'Cross-origin POST from https://evil.example refused: bucket exports has no CORS rule that allows it ' +
          '(PutBucketCors)',
      ),
  },
  {
    file: 'docs/objstore.md',
    quote: 'AuthorizationQueryParametersError',
    async answer() {
      const path = await presignedPath(ctx.instance.objstoreUrl, fullCredentials(), {
        method: 'GET',
        path: OBJECT,
        expiresIn: 60,
      });
      return anonymous('GET', path.replace('X-Amz-Expires=60', 'X-Amz-Expires=-60'));
    },
    also: (answer) => expect(xmlElement(answer.body as string, 'Message')).toBe('X-Amz-Expires must be non-negative'),
  },
  {
    file: 'docs/objstore.md',
    quote: 'CORSResponse',
    answer: () =>
      anonymous('OPTIONS', OBJECT, { origin: 'https://evil.example', 'access-control-request-method': 'GET' }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'InvalidRequest',
    cause: 'Bucket is missing Object Lock Configuration',
    answer: () => ofObject({ method: 'GET', query: { retention: '' } }),
    also: (answer) =>
      expect(xmlElement(answer.body as string, 'Message')).toBe('Bucket is missing Object Lock Configuration'),
  },
  {
    file: 'docs/objstore.md',
    quote: 'MethodNotAllowed',
    answer: () => ofObject({ method: 'GET', query: { uploads: '' } }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'NotImplemented',
    cause: 'PutObjectAcl',
    answer: () => s3({ method: 'GET', path: '/exports', query: { encryption: '' } }),
  },
  {
    file: 'docs/objstore.md',
    quote: 'BucketAlreadyOwnedByYou',
    answer: () => s3({ method: 'PUT', path: '/exports' }),
  },
  {
    file: 'docs/warehouse-demo.md',
    quote: 'Only a SELECT statement runs here (read-only), not COPY',
    answer: () => sql("COPY runs TO '/tmp/doc-quotes.csv'"),
  },
  {
    file: 'docs/warehouse-demo.md',
    quote: 'One statement at a time: the SQL holds 2',
    answer: () => sql('SELECT 1; SELECT 2'),
  },
  {
    file: 'docs/warehouse-demo.md',
    quote: 'Permission Error: Cannot access file ...',
    answer: () => sql("SELECT * FROM read_csv('/etc/passwd')"),
  },
  {
    file: 'docs/warehouse-demo.md',
    quote: 'No object <key> in bucket <bucket>',
    answer: () => call('GET', '/_localplane/objstore/preview?bucket=exports&key=doc-quotes/none.txt'),
  },
];

/** Quotes that show only the shape of some answers: no one request answers them. */
interface Listed extends Entry {
  reason: string;
}

const SHAPES: Listed[] = [
  {
    file: 'docs/errors.md',
    quote: '{"detail": "..."}',
    reason: 'the shape of every error answer; the concrete ones are quoted elsewhere and checked here',
  },
  {
    file: 'docs/errors.md',
    quote: '{"detail": [{"type", "loc", "msg", "input"}]}',
    reason: "the fields of every schema error's items, not JSON; exports.md's value_error quote is one, checked",
  },
  {
    file: 'docs/journal-and-faults.md',
    quote: '{"detail": ...}',
    reason: "what a fault rule's error action answers, with the rule's detail: the rule's own words, not the API's",
  },
  {
    file: 'docs/recording.md',
    quote: '{"detail": "..."}',
    reason: "the 502 of a recording proxy's failed upstream; its details are the table below it, not a quote",
  },
  {
    file: 'docs/dashboard.md',
    quote: '{"detail": …}',
    reason: "what a fault rule's reply body replaces, named in the form's description",
  },
  {
    file: 'docs/errors.md',
    quote: 'detail',
    reason: 'the field of the 400s that refuse a damaged data dir or snapshot, whose words vary with what is damaged',
  },
];

/** Concrete quotes no test here can provoke in reasonable time, with why. */
const NOT_PROVOKED: Listed[] = [
  {
    file: 'docs/objstore.md',
    quote: 'ConditionalRequestConflict',
    cause: 'is not emulated',
    reason: "S3's answer to a conditional write that loses a race, which the page says the objstore never gives",
  },
  {
    file: 'docs/objstore.md',
    quote: 'ConditionalRequestConflict',
    cause: 'never S3',
    reason: "S3's answer to a conditional write that loses a race, which the page says the objstore never gives",
  },
  {
    file: 'docs/warehouse-demo.md',
    quote: 'The query ran past the time limit of 10 s ...',
    reason:
      'the default limit: a query would run 10 s of DuckDB beside the rest; test/warehouse/sql.test.ts stops one ' +
      'past 0.2 s and checks these words with that limit',
  },
  {
    file: 'docs/warehouse-demo.md',
    quote:
      'The query needed more memory than the limit of 1000 MB (sql_memory_limit_mb, PATCH /_localplane/config) and ' +
      'was stopped: Out of Memory Error: ...',
    reason:
      'the default limit: DuckDB would take 1 GB first; test/warehouse/sql-bounds.test.ts passes a limit of its own ' +
      'and checks these words with it',
  },
];

const ENTRIES: Entry[] = [...PROVOKED, ...SHAPES, ...NOT_PROVOKED];
const entriesOf = (quote: Quote) => ENTRIES.filter((entry) => names(entry, quote));
const placeOf = (quote: Quote) => `${quote.file}:${quote.line} ${quote.quote}`;
const countOf = (list: Entry[], quotes = QUOTES) =>
  quotes.filter((quote) => list.some((entry) => names(entry, quote))).length;

describe('the answers README.md and docs/ quote inline', () => {
  it('lists every quote the pages hold, each in one entry of the table of answers or with a reason', () => {
    const keys = ENTRIES.map(keyOf);
    expect(
      keys.filter((key, index) => keys.indexOf(key) !== index),
      'listed twice',
    ).toEqual([]);
    expect(
      QUOTES.filter((quote) => entriesOf(quote).length === 0).map(placeOf),
      'quotes with no answer to check and no reason',
    ).toEqual([]);
    expect(
      QUOTES.filter((quote) => entriesOf(quote).length > 1).map(
        (quote) => `${placeOf(quote)}: ${entriesOf(quote).map(keyOf).join('; ')}`,
      ),
      'quotes more than one entry names (give each its cause)',
    ).toEqual([]);
    expect
      .soft(
        ENTRIES.filter((entry) => !QUOTES.some((quote) => names(entry, quote))).map(keyOf),
        'entries whose quote no page holds',
      )
      .toEqual([]);
    const kinds = ['error_bodies', 's3_error_codes', 'error_types', 'details'];
    const counts = {
      checked_against_answers: countOf(PROVOKED),
      shapes: countOf(SHAPES),
      not_provoked: countOf(NOT_PROVOKED),
      ...Object.fromEntries(
        kinds.map((kind) => {
          const ofKind = QUOTES.filter((quote) => kindOf(quote.quote) === kind);
          return [kind, `${countOf(PROVOKED, ofKind)}/${ofKind.length}`];
        }),
      ),
    };
    console.log(`doc quotes: ${JSON.stringify(counts)}`);
    expect(counts.checked_against_answers + counts.shapes + counts.not_provoked).toBe(QUOTES.length);
  });

  it('reads quotes as the pages show them: spans over lines, a status before or in the span, no fenced block', () => {
    const page = [
      'A miss is 404',
      '`{"detail": "Gone"}`; a clash is **409**',
      '  `{"detail": "Taken',
      '<name>"}`, a span `409 {"detail": "In"}`, a shape `{"detail": ...}` and a',
      '',
      '`` `{"detail": "x"}` `` in double ticks.',
      '```json',
      '`{"detail": "fenced"}`',
      '```',
      '- A bad key is 400 `InvalidURI`, a `name` no status, a taken',
      '  one 409 (`Name <name> taken. Pick',
      '  another`). Then 422 `{"a": 1}` and',
      '| 507, `InsufficientStorage` | 1.5 |',
    ].join('\n');
    const list =
      'A bad key is 400 `InvalidURI`, a `name` no status, a taken one 409 (`Name <name> taken. Pick another`).';
    expect(quotesIn('x.md', page)).toEqual([
      { file: 'x.md', line: 2, quote: '{"detail": "Gone"}', status: 404, sentence: expect.any(String) },
      { file: 'x.md', line: 3, quote: '{"detail": "Taken <name>"}', status: 409, sentence: expect.any(String) },
      { file: 'x.md', line: 4, quote: '{"detail": "In"}', status: 409, sentence: expect.any(String) },
      { file: 'x.md', line: 4, quote: '{"detail": ...}', sentence: expect.any(String) },
      { file: 'x.md', line: 10, quote: 'InvalidURI', status: 400, sentence: list },
      { file: 'x.md', line: 11, quote: 'Name <name> taken. Pick another', status: 409, sentence: list },
      { file: 'x.md', line: 13, quote: 'InsufficientStorage', status: 507, sentence: '507, `InsufficientStorage`' },
    ]);
    expect(quotesIn('x.md', page)[0]!.sentence).toBe(
      'A miss is 404 `{"detail": "Gone"}`; a clash is **409** `{"detail": "Taken <name>"}`, a span ' +
        '`409 {"detail": "In"}`, a shape `{"detail": ...}` and a',
    );
  });

  it.each(QUOTES.filter((quote) => countOf(PROVOKED, [quote])).map((quote) => [`${quote.file}:${quote.line}`, quote]))(
    '%s is answered as quoted',
    async (where, quote) => {
      const entry = PROVOKED.find((candidate) => names(candidate, quote))!;
      if (quote.status !== undefined && entry.status !== undefined)
        throw new Error(`${where}: the doc gives the status; the table need not`);
      const status = quote.status ?? entry.status;
      if (status === undefined) throw new Error(`${where}: neither the doc nor the table gives the status`);
      const answer = await entry.answer();
      const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      const said = `${where}: ${answer.status} ${body}`;
      expect(answer.status, said).toBe(status);
      expect(quoteDiffers(quote.quote, answer.body), said).toBeUndefined();
      entry.also?.(answer);
    },
  );
});
