import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/journal/schemas.ts';
import { requestLogLine } from '../../src/journal/observe.ts';
import { errorResponse } from '../../src/shared/errors.ts';
import { listenHttp } from '../../src/shared/http-server.ts';
import { startCli } from '../support/cli.ts';
import { eventually, fullKey, useLocalplane, type FixturesView } from '../support/instance.ts';
import { s3For } from '../support/objstore.ts';

const LINE = /^localplane: (objstore )?[A-Z]+ \S+ \d{3} \d+ms$/;
const requestLines = (stderr: string) => stderr.split('\n').filter((line) => LINE.test(line));

describe('the request log of the CLI', () => {
  it('prints one line per API and objstore request: method, path without its query, status, ms', async () => {
    const cli = await startCli();
    try {
      await fetch(`${cli.apiUrl}/api/v1/bulk-exports?X-Amz-Signature=query-secret`);
      await fetch(`${cli.objstoreUrl}/exports/some/key?X-Amz-Signature=presigned-secret`);
      await fetch(`${cli.apiUrl}/_localplane/health`);
      const lines = await eventually(async () => {
        const found = requestLines(cli.stderr());
        return found.length >= 2 && found;
      }, 'two request lines');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^localplane: GET \/api\/v1\/bulk-exports 401 \d+ms$/);
      expect(lines[1]).toMatch(/^localplane: objstore GET \/exports\/some\/key 4\d\d \d+ms$/);
      expect(cli.stderr()).not.toContain('secret');
      expect(cli.stderr()).not.toContain('\u001b[');
    } finally {
      await cli.kill('SIGTERM');
    }
  });

  it.each([
    ['--quiet', ['--quiet'], {}],
    ['-q', ['-q'], {}],
    ['LOCALPLANE_QUIET=1', [], { LOCALPLANE_QUIET: '1' }],
  ])('prints none with %s', async (_, flags, env) => {
    const cli = await startCli(flags, { ...process.env, ...env });
    try {
      expect((await fetch(`${cli.apiUrl}/api/v1/bulk-exports`)).status).toBe(401);
      expect((await fetch(`${cli.apiUrl}/_localplane/requests/count`).then((response) => response.json())).count).toBe(
        1,
      );
    } finally {
      await cli.kill('SIGTERM');
    }
    expect(requestLines(cli.stderr())).toEqual([]);
  });
});

describe('the request log of start()', () => {
  const ctx = useLocalplane({ requestLog: true });

  it('goes to the log option', async () => {
    await ctx.api.request('GET', '/v2/deployments');
    expect(ctx.logs.filter((line) => line.startsWith('GET /v2/deployments'))).toEqual([
      expect.stringMatching(/^GET \/v2\/deployments 401 \d+ms$/),
    ]);
  });
});

describe('a request log line', () => {
  const entry = (status: number, source: 'api' | 'objstore' = 'api') =>
    ({ source, method: 'PUT', path: '/a/b', status, duration_ms: 12.6 }) as JournalEntry;

  it('colours the status by its class in a terminal', () => {
    expect(requestLogLine(entry(201), true)).toBe('PUT /a/b \u001b[32m201\u001b[0m 13ms');
    expect(requestLogLine(entry(307), true)).toBe('PUT /a/b \u001b[36m307\u001b[0m 13ms');
    expect(requestLogLine(entry(404), true)).toBe('PUT /a/b \u001b[33m404\u001b[0m 13ms');
    expect(requestLogLine(entry(503, 'objstore'), true)).toBe('objstore PUT /a/b \u001b[31m503\u001b[0m 13ms');
    expect(requestLogLine(entry(503, 'objstore'), false)).toBe('objstore PUT /a/b 503 13ms');
  });
});

/** Any control character but the newline that ends a line. */
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
/** A key that would forge a log line and retitle the terminal, and one with DEL and a C1 CSI. */
const HOSTILE_KEYS = ['evil\nlocalplane: GET /forged 200 1ms\u001b]0;pwned\u0007/', 'c1\u009b31m\u007f/'];

describe('control characters in log lines', () => {
  it.each([
    ['with --quiet', ['--quiet']],
    ['with the request log', []],
  ])('are escaped as \\xNN in the keys the CLI prints, %s', async (_, flags) => {
    const cli = await startCli(flags);
    let bucket: string;
    try {
      const fixtures = (await (await fetch(`${cli.apiUrl}/_localplane/fixtures`)).json()) as FixturesView;
      bucket = fixtures.objstore.buckets[0]!;
      const s3 = s3For(cli.objstoreUrl, fullKey(fixtures));
      // Keys ending in '/' have no plain file: the files view says so on stderr, whatever the request log.
      for (const Key of HOSTILE_KEYS) await s3.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'x' }));
      s3.destroy();
      await eventually(
        async () => (cli.stderr().match(/is left out/g) ?? []).length === HOSTILE_KEYS.length,
        'both keys logged',
      );
    } finally {
      await cli.kill('SIGTERM');
    }
    const lines = cli.stderr().trimEnd().split('\n');
    expect(lines.filter((line) => CONTROL.test(line))).toEqual([]);
    expect(lines.filter((line) => !line.startsWith('localplane: '))).toEqual([]);
    expect(lines).toContain(
      `localplane: objstore files view: ${bucket}/evil\\x0alocalplane: GET /forged 200 1ms\\x1b]0;pwned\\x07/ is ` +
        `left out: a key ending in '/' names a folder`,
    );
    expect(lines.some((line) => line.startsWith('localplane: GET /forged'))).toBe(false);
  });

  it('are escaped in a request log line', () => {
    const entry = {
      source: 'api',
      method: 'GET',
      path: '/a\nb\u001b[2J\u0085',
      status: 404,
      duration_ms: 1,
    } as JournalEntry;
    expect(requestLogLine(entry, false)).toBe('GET /a\\x0ab\\x1b[2J\\x85 404 1ms');
  });

  it('are escaped in the log of an internal error: the path as decoded and the message, its stack frames kept', async () => {
    const lines: string[] = [];
    const app = new Hono();
    app.get('*', () => {
      throw new Error('no such key\nlocalplane: forged line');
    });
    app.onError((error, c) => errorResponse(c, error, (line) => lines.push(line)));
    expect((await app.request('/keys/a%0Ab%1B]0;t%07')).status).toBe(500);
    expect(lines).toHaveLength(1);
    const [head, ...frames] = lines[0]!.split('\n');
    expect(head).toBe(
      'internal error on GET /keys/a\\x0ab\\x1b]0;t\\x07: Error: no such key\\x0alocalplane: forged line',
    );
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.every((frame) => frame.startsWith('    at '))).toBe(true);
  });

  it('are escaped in the log of an error below the app', async () => {
    const lines: string[] = [];
    const server = await listenHttp(
      () => {
        throw new Error('failed on \u001b[31mred\u001b[0m');
      },
      { host: '127.0.0.1', port: 0, log: (line) => lines.push(line) },
    );
    try {
      const { port } = server.address() as { port: number };
      expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(500);
    } finally {
      server.close();
    }
    expect(lines[0]!.split('\n')[0]).toBe('internal error: Error: failed on \\x1b[31mred\\x1b[0m');
  });
});
