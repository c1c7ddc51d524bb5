import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../src/journal/schemas.ts';
import { requestLogLine } from '../src/journal/observe.ts';
import { startCli } from './support/cli.ts';
import { eventually, useLocalplane } from './support/instance.ts';

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
      expect((await fetch(`${cli.apiUrl}/_localplane/requests/count`).then((response) => response.json())).count).toBe(1);
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
    expect(ctx.logs.filter((line) => line.startsWith('GET /v2/deployments'))).toEqual([expect.stringMatching(/^GET \/v2\/deployments 401 \d+ms$/)]);
  });
});

describe('a request log line', () => {
  const entry = (status: number, source: 'api' | 'objstore' = 'api') => ({ source, method: 'PUT', path: '/a/b', status, duration_ms: 12.6 }) as JournalEntry;

  it('colours the status by its class in a terminal', () => {
    expect(requestLogLine(entry(201), true)).toBe('PUT /a/b \u001b[32m201\u001b[0m 13ms');
    expect(requestLogLine(entry(307), true)).toBe('PUT /a/b \u001b[36m307\u001b[0m 13ms');
    expect(requestLogLine(entry(404), true)).toBe('PUT /a/b \u001b[33m404\u001b[0m 13ms');
    expect(requestLogLine(entry(503, 'objstore'), true)).toBe('objstore PUT /a/b \u001b[31m503\u001b[0m 13ms');
    expect(requestLogLine(entry(503, 'objstore'), false)).toBe('objstore PUT /a/b 503 13ms');
  });
});
