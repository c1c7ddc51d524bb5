/**
 * The dashboard's pages as app.request() sees them: whole pages and htmx fragments, its assets
 * served from the package, the headers that keep it from being framed, and the browser guard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';

let lp: InProcessLocalplane;

beforeAll(async () => {
  lp = await createLocalplane({ log: () => {} });
});

afterAll(async () => {
  await lp?.stop();
});

describe('the overview at /ui', () => {
  it('is a whole page with landmarks, every view in the navigation, the clock and the fixture workspaces', async () => {
    const response = await lp.request('/ui');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page.startsWith('<!doctype html><html lang="en">')).toBe(true);
    for (const landmark of ['<header', '<nav aria-label="Views">', '<main id="main"']) expect(page).toContain(landmark);
    for (const view of [
      '/ui/requests',
      '/ui/exports',
      '/ui/objects',
      '/ui/sql',
      '/ui/deployments',
      '/ui/clock',
      '/ui/faults',
      '/ui/state',
    ]) {
      expect(page).toContain(`href="${view}"`);
    }
    expect(page).toContain('<a href="/ui" aria-current="page">Overview</a>');
    const { now } = (await (await lp.request('/_localplane/clock')).json()) as { now: string };
    expect(page).toContain(now.slice(0, 16));
    const { workspaces } = (await (await lp.request('/_localplane/state')).json()) as {
      workspaces: { name: string }[];
    };
    expect(workspaces.length).toBeGreaterThan(0);
    for (const workspace of workspaces) expect(page).toContain(`<th scope="row">${workspace.name}</th>`);
  });

  it('answers htmx with the changing part alone', async () => {
    const fragment = await (await lp.request('/ui', { headers: { 'hx-request': 'true' } })).text();
    expect(fragment).toContain('<section class="cards"');
    expect(fragment).not.toContain('<html');
    const restored = await (
      await lp.request('/ui', { headers: { 'hx-request': 'true', 'hx-history-restore-request': 'true' } })
    ).text();
    expect(restored).toContain('<html');
  });

  it('is never framed and loads nothing from elsewhere', async () => {
    const response = await lp.request('/ui');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    const page = await response.text();
    expect(page).not.toMatch(/(src|href)="(https?:)?\/\//);
  });
});

describe('the assets', () => {
  it('come from the package, gzipped when asked, revalidated by ETag', async () => {
    const plain = await lp.request('/ui/assets/htmx.min.js');
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await plain.text()).toContain('htmx');
    const gzipped = await lp.request('/ui/assets/htmx.min.js', { headers: { 'accept-encoding': 'gzip' } });
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    const tag = gzipped.headers.get('etag');
    expect(tag).toBeTruthy();
    const again = await lp.request('/ui/assets/htmx.min.js', {
      headers: { 'accept-encoding': 'gzip', 'if-none-match': tag! },
    });
    expect(again.status).toBe(304);
    for (const name of ['sse.min.js', 'uPlot.iife.min.js', 'uPlot.min.css', 'ui.css', 'ui.js'])
      expect((await lp.request(`/ui/assets/${name}`)).status).toBe(200);
  });

  it('are only the listed files', async () => {
    for (const name of ['../package.json', '..%2Fpackage.json', 'htmx.js', 'constructor']) {
      const response = await lp.request(`/ui/assets/${name}`);
      expect(response.status).toBe(404);
    }
  });
});

describe('the browser guard', () => {
  it('refuses the dashboard under a foreign Host', async () => {
    const foreign = await lp.request('http://evil.example/ui');
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { detail: string }).detail).toContain('evil.example');
  });
});

describe("the overview's activity", () => {
  it(
    'charts the requests of the last 30 minutes by status class and lists the latest errors, linked to their ' +
      'entries',
    async () => {
      const { workspaces } = (await (await lp.request('/_localplane/fixtures')).json()) as {
        workspaces: { api_key: string }[];
      };
      await lp.request('/v2/deployments', { headers: { 'x-api-key': workspaces[0]!.api_key } });
      await lp.request('/v2/deployments/not-a-uuid', { headers: { 'x-api-key': workspaces[0]!.api_key } });
      const [refused] = (await (await lp.request('/_localplane/requests?status=4xx&order=desc&limit=1')).json())
        .requests as { id: number; status: number }[];
      const fragment = await (await lp.request('/ui/activity')).text();
      const chart = JSON.parse(/data-chart="([^"]*)"/.exec(fragment)![1]!.replace(/&quot;/g, '"')) as {
        x: number[];
        series: { label: string; values: number[] }[];
      };
      expect(chart.x).toHaveLength(30);
      expect(chart.series.map((series) => series.label)).toEqual(['2xx', '3xx', '4xx', '5xx']);
      expect(chart.series[0]!.values.reduce((sum, value) => sum + value, 0)).toBeGreaterThanOrEqual(1);
      expect(chart.series[2]!.values.reduce((sum, value) => sum + value, 0)).toBeGreaterThanOrEqual(1);
      expect(fragment).toContain(`<a href="/ui/requests/${refused!.id}">GET /v2/deployments/not-a-uuid</a>`);
      expect(fragment).toContain('hx-trigger="every 5s"');
      expect(await (await lp.request('/ui')).text()).toContain('id="activity"');
    },
  );
});

describe("the browser's cache", () => {
  it('keeps a page and the fragment of the same URL apart (Vary: HX-Request), and revalidates both', async () => {
    for (const headers of [{}, { 'hx-request': 'true' }] as Record<string, string>[]) {
      const response = await lp.request('/ui', { headers });
      expect(response.headers.get('vary')).toBe('HX-Request');
      expect(response.headers.get('cache-control')).toBe('no-cache');
    }
    expect((await lp.request('/ui/assets/ui.css')).headers.get('vary')).toBe('accept-encoding');
  });
});
