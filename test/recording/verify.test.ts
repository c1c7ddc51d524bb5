// `localplane verify`: recordings of real exchanges with an upstream localplane (another seed, so every id it creates
// differs), replayed into a fresh instance and compared.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyBytes, bodyJson, readRecording } from '../../src/recording/har.ts';
import { compareAnswers, describeDifference } from '../../src/recording/verify-compare.ts';
import { start, verifyRecording, type VerifyReport } from '../../src/index.ts';
import { expectUsageError, runCli } from '../support/cli.ts';
import { recordScenario, type RecordedScenario } from './support/scenario.ts';

const dir = mkdtempSync(join(tmpdir(), 'localplane-verify-'));
const CLEAN = join(dir, 'clean.har');
const FAULTED = join(dir, 'faulted.har');
const RESHAPED = join(dir, 'reshaped.har');

/** What the scenario's client got, by the recording it made. */
const recorded = new Map<string, RecordedScenario>();
const scenario = () => recorded.get(CLEAN)!;
const workspace = () => scenario().workspace;
const auth = () => ({ 'X-API-Key': workspace().api_key, 'X-Tenant-Id': workspace().id });
const reposPath = () => `/v1/integrations/forge/codehost/${workspace().integrations[0]!.id}/repos`;

interface Reshaping {
  method: string;
  path: RegExp;
  /** Takes the parsed answer (an object or an array, as the path's answer is). */
  reshape: (body: unknown) => unknown;
}

/** Drifts on purpose: each reshaping changes the first answer that matches it; everything else passes through. */
const RESHAPINGS: Reshaping[] = [
  {
    method: 'POST',
    path: /^\/v2\/listeners$/,
    reshape: (body) =>
      Object.fromEntries(
        Object.entries(body as Record<string, unknown>).map(([key, value]) => [
          key === 'compute_id' ? 'computeId' : key,
          value,
        ]),
      ),
  },
  {
    method: 'GET',
    path: /^\/v2\/auth\/providers$/,
    reshape: (body) => (body as Record<string, unknown>[]).map(({ client_id: _dropped, ...provider }) => provider),
  },
  {
    method: 'GET',
    path: /^\/api\/v1\/bulk-exports\/[^/]+\/runs\/[^/]+$/,
    reshape: (body) => {
      const run = body as Record<string, unknown>;
      return { ...run, retry_number: String(run.retry_number) };
    },
  },
];

/** A small HTTP server in front of the upstream that reshapes answers as RESHAPINGS say. */
async function reshapingProxy(upstreamUrl: string): Promise<{ url: string; server: Server }> {
  const pending = [...RESHAPINGS];
  const proxy = async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => name !== 'host' && name !== 'content-length'),
    ) as Record<string, string>;
    const answer = await fetch(`${upstreamUrl}${request.url}`, {
      method: request.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    let text = await answer.text();
    const path = new URL(request.url!, upstreamUrl).pathname;
    const reshaping = pending.find((candidate) => candidate.method === request.method && candidate.path.test(path));
    if (reshaping) {
      pending.splice(pending.indexOf(reshaping), 1);
      text = JSON.stringify(reshaping.reshape(JSON.parse(text)));
    }
    const contentType = answer.headers.get('content-type');
    response.writeHead(answer.status, contentType === null ? {} : { 'content-type': contentType });
    response.end(text);
  };
  const server = createServer((request, response) => {
    // A failure reaches the recorder as a bad gateway, saying what went wrong.
    proxy(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  const upstream = await start({ port: 0, objstorePort: 0, freezeClock: true, seed: 2, log: () => {} });
  try {
    recorded.set(CLEAN, await recordScenario({ upstream, out: CLEAN }));

    await upstream.reset();
    upstream.faultRules.add({ match: { method: 'GET', path: reposPath() }, action: { status: 503 }, count: 1 });
    recorded.set(FAULTED, await recordScenario({ upstream, out: FAULTED }));

    await upstream.reset();
    const proxy = await reshapingProxy(upstream.apiUrl);
    recorded.set(RESHAPED, await recordScenario({ upstream, out: RESHAPED, via: proxy.url }));
    proxy.server.close();
  } finally {
    // Stopped before any replay: a destination naming its objstore must be pointed at the replay's own.
    await upstream.stop();
  }
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Each exchange that is not the same, as `<index> <method> <path>` with its reasons. */
const differing = (report: VerifyReport, outcome: 'drift' | 'not comparable') =>
  report.results
    .filter((result) => result.outcome === outcome)
    .map(({ index, method, path, reasons }) => ({ exchange: `${index} ${method} ${path}`, reasons }));

const entries = (path: string) => readRecording(path).entries;
const exchangeOf = (path: string, method: string, pattern: RegExp) => {
  const index = entries(path).findIndex(
    (entry) => entry.request.method === method && pattern.test(new URL(entry.request.url).pathname),
  );
  const entry = entries(path)[index]!;
  return `${index} ${method} ${new URL(entry.request.url).pathname}`;
};

describe('verifyRecording', () => {
  let clean: VerifyReport;
  beforeAll(async () => {
    clean = await verifyRecording(CLEAN);
  }, 60_000);

  it(
    'finds no drift in a recording of the same behaviour, with every id the upstream created mapped to the one ' +
      'created here',
    () => {
      expect(scenario().unexpected).toEqual([]);
      expect(clean.drift, JSON.stringify(differing(clean, 'drift'), null, 1)).toBe(0);
      expect(clean).toMatchObject({ exchanges: entries(CLEAN).length, skipped: 0 });
      expect(clean.same).toBe(clean.exchanges - 1);
      const recordedDestination = scenario().destination.id;
      expect(clean.ids[recordedDestination]).toMatch(/^[0-9a-f-]{36}$/);
      expect(clean.ids[recordedDestination]).not.toBe(recordedDestination);
      // The exports, a run, the listeners, the deployments, their revisions: each mapped.
      expect(Object.keys(clean.ids).length).toBeGreaterThanOrEqual(8);
    },
  );

  it('reports a request about a resource the upstream had before the recording as not comparable', () => {
    const earlierId = scenario().earlierDestinationId;
    expect(differing(clean, 'not comparable')).toEqual([
      {
        exchange: exchangeOf(CLEAN, 'GET', new RegExp(`/${earlierId}$`)),
        reasons: [`${earlierId} existed upstream before the recording`],
      },
    ]);
  });

  it('replays from recordings whose key, credentials and secrets are masked in place: none of them is in any file', () => {
    for (const [file, { secrets }] of recorded) {
      const text = readFileSync(file, 'utf8');
      expect(
        secrets.filter((secret) => text.includes(secret)),
        file,
      ).toEqual([]);
    }
    const sent = entries(CLEAN).map((entry) => bodyJson(entry.request.postData) as Record<string, unknown> | undefined);
    const masked = { access_key_id: '********', secret_access_key: '********' };
    expect(sent.flatMap((body) => (body?.credentials === undefined ? [] : [body.credentials]))).toEqual([
      masked,
      masked,
      masked,
    ]);
    expect(sent.flatMap((body) => (body?.secrets === undefined ? [] : [body.secrets]))).toEqual(
      Array(4).fill([{ name: 'OPENAI_API_KEY', value: '********' }]),
    );
  });

  it('reports the one exchange a fault rule changed upstream, as its status', async () => {
    expect(recorded.get(FAULTED)!.unexpected).toEqual([`GET ${reposPath()}: 503, meant 200`]);
    const report = await verifyRecording(FAULTED);
    expect(differing(report, 'drift')).toEqual([
      {
        exchange: exchangeOf(FAULTED, 'GET', /^\/v1\/integrations\/forge\/codehost\/[0-9a-f-]{36}\/repos$/),
        reasons: ['status 503 → 200'],
      },
    ]);
    expect(report.notComparable).toBe(1);
  }, 60_000);

  it('reports exactly the answers a proxy reshaped: a field renamed, one dropped, one of another type', async () => {
    expect(recorded.get(RESHAPED)!.unexpected).toEqual([]);
    const report = await verifyRecording(RESHAPED);
    expect(differing(report, 'drift')).toEqual([
      { exchange: exchangeOf(RESHAPED, 'GET', /\/runs\/[^/]+$/), reasons: ['body.retry_number: string → number'] },
      {
        exchange: exchangeOf(RESHAPED, 'POST', /^\/v2\/listeners$/),
        reasons: ['body.computeId: missing', 'body.compute_id: extra'],
      },
      { exchange: exchangeOf(RESHAPED, 'GET', /^\/v2\/auth\/providers$/), reasons: ['body[].client_id: extra'] },
    ]);
  }, 60_000);
});

describe('verifyRecording: mapping and what is not compared', () => {
  it('replays into a running instance as it is (--url), moving its frozen clock by the recorded gaps', async () => {
    const running = await start({ port: 0, objstorePort: 0, freezeClock: true, log: () => {} });
    try {
      const before = running.clock.now();
      const report = await verifyRecording(CLEAN, { url: running.apiUrl });
      expect(report.drift, JSON.stringify(differing(report, 'drift'))).toBe(0);
      // The recorder timed the exchanges by the upstream's clock, which the scenario moved.
      expect((running.clock.now() - before) / 1_000_000).toBe(scenario().secondsPassed);
      const exportId = report.ids[scenario().completedExport.id]!;
      const exported = await running.request(`/api/v1/bulk-exports/${exportId}`, { headers: auth() });
      expect(((await exported.json()) as { status: string }).status).toBe('Completed');
    } finally {
      await running.stop();
    }
  }, 60_000);

  it('maps a workspace the instance does not have to the one asked for, and refuses one it does not have', async () => {
    const elsewhere = join(dir, 'elsewhere.har');
    writeFileSync(
      elsewhere,
      readFileSync(CLEAN, 'utf8').replaceAll(workspace().id, '7d1c8a52-3b7e-4d0a-9f55-2a6c1e9b0d44'),
    );
    const report = await verifyRecording(elsewhere, { workspace: workspace().id });
    expect(report).toMatchObject({ drift: 0, notComparable: 1 });
    await expect(verifyRecording(elsewhere, { workspace: '00000000-0000-4000-8000-000000000000' })).rejects.toThrow(
      /workspace 00000000-0000-4000-8000-000000000000 is not a fixture workspace of the instance/,
    );
  }, 60_000);

  it("skips what is not the API (a browser's page assets) and does not compare answers the recorder broke or cut", async () => {
    const log = readRecording(CLEAN);
    const listed = log.entries.find(
      (entry) => entry.request.method === 'GET' && entry.request.url.endsWith('/v2/listeners'),
    )!;
    const asset = structuredClone(listed);
    asset.request.url = 'https://app.example/static/main.js';
    asset.response.content = { size: 9, mimeType: 'text/javascript', text: 'export {}' };
    const unreachable = structuredClone(listed);
    unreachable.response.status = 502;
    unreachable._error = 'upstream unreachable: connect ECONNREFUSED';
    const cut = structuredClone(listed);
    cut.response.content.size += 100;
    // An answer the recorder masked keeps less text than the answer had (a push token's 40 characters are 8 now): only
    // `_truncated` says it was cut.
    const graphA = scenario().deployments.find((deployment) => deployment.name === 'recorded-graph-a')!;
    const deploymentPath = `/v2/deployments/${graphA.id}`;
    const masked = structuredClone(
      log.entries.find(
        (entry) => entry.request.method === 'GET' && new URL(entry.request.url).pathname === deploymentPath,
      )!,
    );
    masked.response.content.size += 32;
    masked._masked = ['response.content.token'];
    const truncated = structuredClone(masked);
    truncated.response.content._truncated = true;
    const first = log.entries.length;
    const report = await verifyRecording({
      ...log,
      entries: [...log.entries, asset, unreachable, cut, masked, truncated],
    });
    const keptOfMasked = bodyBytes(masked.response.content)!.length;
    expect(report.results.slice(first)).toEqual([
      {
        index: first,
        method: 'GET',
        path: '/static/main.js',
        outcome: 'skipped',
        reasons: ['not a request to the API'],
      },
      {
        index: first + 1,
        method: 'GET',
        path: '/v2/listeners',
        outcome: 'not comparable',
        reasons: ["the recorded answer is the recorder's error: upstream unreachable: connect ECONNREFUSED"],
      },
      {
        index: first + 2,
        method: 'GET',
        path: '/v2/listeners',
        outcome: 'not comparable',
        reasons: [
          `the recorded answer was cut (${cut.response.content.size - 100} of ${cut.response.content.size} bytes)`,
        ],
      },
      { index: first + 3, method: 'GET', path: deploymentPath, outcome: 'same', reasons: [] },
      {
        index: first + 4,
        method: 'GET',
        path: deploymentPath,
        outcome: 'not comparable',
        reasons: [`the recorded answer was cut (${keptOfMasked} of ${masked.response.content.size} bytes)`],
      },
    ]);
    expect(report).toMatchObject({ drift: 0, notComparable: 4, skipped: 1 });
  }, 60_000);
});

describe('compareAnswers', () => {
  const answer = (status: number, body: unknown, contentType = 'application/json') => ({
    status,
    contentType,
    body,
    bodyKept: true,
  });
  const differences = (recorded: ReturnType<typeof answer>, here: ReturnType<typeof answer>) =>
    compareAnswers(recorded, here).map(describeDifference);

  it('takes null for any type, an empty list for any list, and compares list elements merged', () => {
    expect(
      differences(
        answer(200, { a: null, b: [], c: [{ x: 1 }, { y: 'z' }] }),
        answer(200, { a: 'text', b: [{ q: 1 }], c: [{ x: 2, y: 'w' }] }),
      ),
    ).toEqual([]);
    expect(differences(answer(200, { resources: [{ name: 'a' }] }), answer(200, { resources: [{}] }))).toEqual([
      'body.resources[].name: missing',
    ]);
    expect(differences(answer(200, { count: 1, 'a.b': true }), answer(200, { count: '1', 'a.b': true }))).toEqual([
      'body.count: number → string',
    ]);
  });

  it("compares a 422's errors by type and loc, and a detail string against a list by its type", () => {
    const error = (type: string, loc: string[]) => ({ type, loc, msg: 'any words' });
    expect(
      differences(
        answer(422, { detail: [error('missing', ['body', 'name']), error('enum', ['body', 'source'])] }),
        answer(422, { detail: [error('string_type', ['body', 'name'])] }),
      ),
    ).toEqual(['body.detail: 2 errors → 1 error', 'body.detail[0].type: "missing" → "string_type"']);
    expect(
      differences(answer(422, { detail: 'Invalid' }), answer(422, { detail: [error('missing', ['body'])] })),
    ).toEqual(['body.detail: string → array']);
  });

  it('compares the media type without its parameters; a different status is the one difference', () => {
    expect(
      differences(answer(200, {}, 'application/json'), answer(200, {}, 'application/json; charset=utf-8')),
    ).toEqual([]);
    expect(differences(answer(204, undefined, ''), answer(200, { a: 1 }))).toEqual(['status 204 → 200']);
  });
});

describe('localplane verify', () => {
  it('prints the exchanges that differ and a summary, and exits 1 on drift', async () => {
    const result = await runCli(['verify', RESHAPED]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ *# {2}method {2}path +what differs$/);
    expect(lines).toContainEqual(
      expect.stringMatching(/^ *\d+ {2}GET {5}\/v2\/auth\/providers +body\[\]\.client_id: extra$/),
    );
    expect(lines.at(-1)).toBe(
      `${entries(RESHAPED).length} exchanges: ${entries(RESHAPED).length - 4} same, 3 drift, 1 not comparable, 0 ` +
        `skipped`,
    );
  }, 60_000);

  it('exits 0 on a recording without drift; --json prints the report as one document', async () => {
    const result = await runCli(['verify', CLEAN, '--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toMatchObject({ exchanges: entries(CLEAN).length, drift: 0, notComparable: 1 });
  }, 60_000);

  it.each([
    [
      ['verify'],
      /^localplane: verify needs a recording: localplane verify <recording.har> \(see localplane --help\)\n$/,
    ],
    [['verify', join(dir, 'missing.har')], /^localplane: .*missing\.har cannot be read: ENOENT/],
    [
      ['verify', CLEAN, '--url', 'localhost:9400'],
      /^localplane: --url must be an http:\/\/ or https:\/\/ URL, got "localhost:9400"/,
    ],
    [['verify', CLEAN, '--sql', 'select 1'], /^localplane: --sql is not an option of localplane verify/],
  ])('%j is a usage error (exit code 2)', (args, words) => expectUsageError(args, words));

  it('verify --help lists its own flags with their defaults', async () => {
    const result = await runCli(['verify', '--help']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    for (const flag of ['--url <url>', '--workspace <id>', '--json'])
      expect(result.stdout).toMatch(new RegExp(`^  ${flag} +\\S.*\\n +\\(default .+\\)$`, 'm'));
    expect(result.stdout).not.toContain('--port');
  });
});
