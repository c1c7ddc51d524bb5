import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';
import { codehostDeploymentBody } from '../support/deployments.ts';
import { DOC_FILES, escapeRegExp, shapeDiffers } from '../support/doc-blocks.ts';
import { credentialsOf, eventually, fullKey, useLocalplane, workspaceByTier } from '../support/instance.ts';
import type { FixtureWorkspace } from '../support/instance.ts';

/**
 * Every error answer README.md and docs/ quote inline, as a code span holding an error body (`{"detail": ...}`,
 * optionally after its status), is the answer a real instance gives: each concrete quote is provoked by the requests of
 * the table below and its `detail` compared with the quote (`<id>`, `<name>` and the other placeholders stand for any
 * value, `...` and `…` for any text), its status too (the doc's, right before the quote, or the table's); a quote that
 * only shows the shape of some answers is listed with why. A quote in no list fails, as does an entry whose quote is
 * gone. The fenced blocks are test/project/doc-blocks.test.ts's.
 */

interface Quote {
  file: string;
  /** The line of the code span's opening backtick, from 1. */
  line: number;
  /** The code span's text, from `{"detail"` on. */
  quote: string;
  /** The status the doc gives right before the quote (or in the span, before the body). */
  status?: number;
}

const CODE_SPAN_STATUS = /^(\d{3}) +(?=\{"detail")/;
/** A status right before a span: `is 404 `, `**409**` and a line break, `the 400 `. */
const STATUS_BEFORE = /(?:^|[\s(])\**(\d{3})\**\s*$/;

/**
 * The inline code spans of a page that hold an error body, outside its fenced blocks (a span may go over lines
 * within a paragraph, as CommonMark reads it).
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
  const quotes: Quote[] = [];
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
    let text = prose.slice(start, end.index).replace(/\n/g, ' ');
    if (/^ .*[^ ].* $/.test(text)) text = text.slice(1, -1);
    const inSpan = CODE_SPAN_STATUS.exec(text);
    const quote = text.slice(inSpan ? inSpan[0].length : 0);
    if (!quote.startsWith('{"detail"')) continue;
    const before = STATUS_BEFORE.exec(prose.slice(Math.max(0, opening.index - 20), opening.index));
    const status = inSpan?.[1] ?? before?.[1];
    quotes.push({
      file,
      line: prose.slice(0, opening.index).split('\n').length,
      quote,
      ...(status === undefined ? {} : { status: Number(status) }),
    });
  }
  return quotes;
}

const QUOTES = DOC_FILES.flatMap((file) => quotesIn(file, readFileSync(join(REPO_ROOT, file), 'utf8')));
const keyOf = (entry: { file: string; quote: string }) => `${entry.file}: ${entry.quote}`;

/**
 * Values a quote leaves to the reader: each stands for one value (text without spaces, not ending in `.`, `,`, `:` or
 * `;`; `<ids>` a list of them joined with `, `), so that a quote missing a word or a stop beside one (`Deployment <id>`
 * for `Deployment ID <id>`) still differs. `...` and `…` stand for any text.
 */
const PLACEHOLDERS = [
  '<id>',
  '<ids>',
  '<name>',
  '<url>',
  '<path>',
  '<workspace id>',
  '<key>',
  '<bucket>',
  '<host:port>',
];

/** One value: no spaces, and not ending in the punctuation that follows one. */
const VALUE = String.raw`\S*[^\s.,:;]`;

/** Whether an answer's body is the quote's: `undefined` if it is, else where it differs. */
function quoteDiffers(quote: string, body: unknown): string | undefined {
  const text = /^\{"detail": "(.*)"\}$/s.exec(quote);
  if (text) {
    if (body === null || typeof body !== 'object' || Object.keys(body).join() !== 'detail')
      return `an answer of {"detail"} alone in the doc, ${JSON.stringify(body)} here`;
    const detail = (body as { detail: unknown }).detail;
    const wildcards = new RegExp(`(${[...PLACEHOLDERS, '...', '…'].map(escapeRegExp).join('|')})`);
    const pattern = text[1]!
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
      : `detail: ${JSON.stringify(text[1])} in the doc, ${JSON.stringify(detail)} here`;
  }
  // A detail that is not a string: the quote as JSON, a trailing `...` of an object standing for any other keys.
  const doc: unknown = JSON.parse(quote.replace(/,\s*(?:\.\.\.|…)\s*\}/g, ', "...": "..."}'));
  return shapeDiffers(doc, body, true);
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
async function call(
  method: string,
  path: string,
  options: { as?: FixtureWorkspace; body?: unknown; raw?: Uint8Array; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.as) Object.assign(headers, { 'X-API-Key': options.as.api_key, 'X-Tenant-Id': options.as.id });
  let body: BodyInit | undefined = options.raw as BodyInit | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  const response = await ctx.instance.request(path, { method, headers, body });
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

const destinationWithEndpoint = (endpointUrl: string) =>
  call('POST', '/api/v1/bulk-exports/destinations', {
    as: acme(),
    body: {
      display_name: 'doc-quotes',
      config: { bucket_name: 'exports', prefix: 'doc-quotes', endpoint_url: endpointUrl },
      credentials: credentialsOf(fullKey(ctx.fixtures)),
    },
  });

const deploymentOf = (workspace: FixtureWorkspace, source: string) =>
  workspace.deployments.find((deployment) => deployment.source === source)!.id;

const listenerBody = (computeId: string) => ({
  compute_type: 'k8s',
  compute_id: computeId,
  compute_config: { k8s_namespaces: ['graphs'] },
});

/** Creates exports of the workspace one after another until one is refused, answering the refusal. */
async function createUntilRefused(workspace: FixtureWorkspace, body: Record<string, unknown>, most: number) {
  for (let created = 0; created <= most; created++) {
    const answer = await call('POST', '/api/v1/bulk-exports', { as: workspace, body });
    if (answer.status !== 200) return { answer, created };
  }
  throw new Error(`${most + 1} exports created, none refused`);
}

interface Provoked {
  file: string;
  quote: string;
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
        body: {
          name: 'doc-quotes-on-a-listener',
          source: 'external_container',
          source_config: { listener_id: listener.id, listener_config: { k8s_namespace: 'graphs' } },
          source_revision_config: { image_uri: 'registry.example/agent:1' },
          secrets: [],
        },
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
        const refused = await fetch(streamUrl);
        return { status: refused.status, body: await refused.json(), headers: refused.headers };
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
    async answer() {
      // The default limit itself, in a workspace of its own (then reset): a create is a few milliseconds here.
      const globexId = globex().id;
      try {
        const body = {
          bulk_export_destination_id: await destination(globex(), 'doc-quotes-hourly'),
          session_id: globex().sessions[0]!.id,
          start_time: '2026-10-01T00:00:00Z',
          end_time: '2026-10-02T00:00:00Z',
        };
        const { answer, created } = await createUntilRefused(globex(), body, 250);
        expect(created).toBe(250);
        return answer;
      } finally {
        await admin('POST', '/reset', { workspace_id: globexId, keep_clock: true });
      }
    },
    also: (answer) => expect(answer.headers.get('retry-after')).toMatch(/^\d+$/),
  },
  {
    file: 'docs/limits.md',
    quote:
      '{"detail": "Too many recurring bulk exports: a workspace may have at most 200 active at once. Cancel one ' +
      'before creating another."}',
    async answer() {
      const globexId = globex().id;
      try {
        const body = {
          bulk_export_destination_id: await destination(globex(), 'doc-quotes-recurring'),
          session_id: globex().sessions[0]!.id,
          start_time: '2026-10-01T00:00:00Z',
          interval_hours: 24,
        };
        const { answer, created } = await createUntilRefused(globex(), body, 200);
        expect(created).toBe(200);
        return answer;
      } finally {
        await admin('POST', '/reset', { workspace_id: globexId, keep_clock: true });
      }
    },
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
];

/** Quotes that show only the shape of some answers: no one request answers them. */
const SHAPES: { file: string; quote: string; reason: string }[] = [
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
];

/** Concrete quotes no test here can provoke in reasonable time, with why. */
const NOT_PROVOKED: { file: string; quote: string; reason: string }[] = [];

const provoked = new Map(PROVOKED.map((entry) => [keyOf(entry), entry]));
const listed = new Map([...SHAPES, ...NOT_PROVOKED].map((entry) => [keyOf(entry), entry]));

describe('the error answers README.md and docs/ quote inline', () => {
  it('lists every quote the pages hold, each once, in the table of answers or with a reason', () => {
    const found = new Set(QUOTES.map(keyOf));
    const entries = [...PROVOKED, ...SHAPES, ...NOT_PROVOKED].map(keyOf);
    expect(
      entries.filter((key, index) => entries.indexOf(key) !== index),
      'listed twice',
    ).toEqual([]);
    expect(
      QUOTES.filter((quote) => !provoked.has(keyOf(quote)) && !listed.has(keyOf(quote))).map(
        (quote) => `${quote.file}:${quote.line} ${quote.quote}`,
      ),
      'quotes with no answer to check and no reason',
    ).toEqual([]);
    expect
      .soft(
        entries.filter((key) => !found.has(key)),
        'entries whose quote no page holds',
      )
      .toEqual([]);
    const counts = {
      checked_against_answers: QUOTES.filter((quote) => provoked.has(keyOf(quote))).length,
      shapes: QUOTES.filter((quote) => SHAPES.some((shape) => keyOf(shape) === keyOf(quote))).length,
      not_provoked: QUOTES.filter((quote) => NOT_PROVOKED.some((entry) => keyOf(entry) === keyOf(quote))).length,
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
    ].join('\n');
    expect(quotesIn('x.md', page)).toEqual([
      { file: 'x.md', line: 2, quote: '{"detail": "Gone"}', status: 404 },
      { file: 'x.md', line: 3, quote: '{"detail": "Taken <name>"}', status: 409 },
      { file: 'x.md', line: 4, quote: '{"detail": "In"}', status: 409 },
      { file: 'x.md', line: 4, quote: '{"detail": ...}' },
    ]);
  });

  it.each(QUOTES.filter((quote) => provoked.has(keyOf(quote))).map((quote) => [`${quote.file}:${quote.line}`, quote]))(
    '%s is answered as quoted',
    async (where, quote) => {
      const entry = provoked.get(keyOf(quote))!;
      if (quote.status !== undefined && entry.status !== undefined)
        throw new Error(`${where}: the doc gives the status; the table need not`);
      const status = quote.status ?? entry.status;
      if (status === undefined) throw new Error(`${where}: neither the doc nor the table gives the status`);
      const answer = await entry.answer();
      const said = `${where}: ${answer.status} ${JSON.stringify(answer.body)}`;
      expect(answer.status, said).toBe(status);
      expect(quoteDiffers(quote.quote, answer.body), said).toBeUndefined();
      entry.also?.(answer);
    },
  );
});
