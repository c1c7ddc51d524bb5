/**
 * Every page and action of the dashboard that a crawl from its navigation finds, sent what no
 * form sends: never a 5xx, and nothing sent comes back as markup (no reflected script).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createLocalplane, type InProcessLocalplane } from '../../src/index.ts';

let lp: InProcessLocalplane;

beforeAll(async () => {
  lp = await createLocalplane({ log: () => {}, freezeClock: true });
});

afterAll(async () => {
  await lp?.stop();
});

const PLANTED = '<script>planted()</script>';
const MAX_PAGES = 80;

interface Target {
  method: 'GET' | 'POST';
  path: string;
}

/** A URL's route, ids and numbers aside: the crawl keeps one page and one action of each. */
const shapeOf = (url: string) =>
  url
    .split('?')[0]!
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, ':id')
    .replace(/\d+/g, ':n');

const decode = (text: string) =>
  text
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');

/** The dashboard URLs a page links to or acts on: links, forms and htmx attributes. */
function targetsOf(page: string): Target[] {
  const found: Target[] = [];
  for (const [, attribute, value] of page.matchAll(
    /\s(href|action|hx-get|hx-post|hx-delete|hx-put|sse-connect)="([^"]*)"/g,
  )) {
    const url = decode(value!);
    if (!url.startsWith('/ui') || url.startsWith('/ui/assets/')) continue;
    const method = attribute === 'href' || attribute === 'hx-get' || attribute === 'sse-connect' ? 'GET' : 'POST';
    found.push({ method, path: url.split('#')[0]! });
  }
  for (const form of page.matchAll(/<form\b[^>]*>/g)) {
    const tag = form[0];
    const action = /\saction="([^"]*)"/.exec(tag)?.[1];
    const method = /\smethod="([^"]*)"/i.exec(tag)?.[1]?.toUpperCase() === 'POST' ? 'POST' : 'GET';
    if (action?.startsWith('/ui')) found.push({ method, path: decode(action) });
  }
  return found;
}

/** Pages reached from the navigation, breadth first, one of each shape, with one action of each shape found on them. */
async function crawl(): Promise<{ pages: string[]; actions: Target[] }> {
  const queue = ['/ui'];
  const shapes = new Set(queue.map(shapeOf));
  const actions = new Map<string, Target>();
  const pages: string[] = [];
  while (queue.length > 0 && pages.length < MAX_PAGES) {
    const path = queue.shift()!;
    const response = await lp.request(path);
    const type = response.headers.get('content-type') ?? '';
    const body = await response.text();
    expect(response.status, `GET ${path}`).toBeLessThan(500);
    pages.push(path);
    if (!type.startsWith('text/html')) continue;
    for (const target of targetsOf(body)) {
      const shape = shapeOf(target.path);
      if (target.method === 'POST') {
        if (!actions.has(shape)) actions.set(shape, target);
      } else if (!shapes.has(shape) && !target.path.includes('/stream')) {
        shapes.add(shape);
        queue.push(target.path);
      }
    }
  }
  return { pages, actions: [...actions.values()] };
}

const BODIES: { name: string; type: string; body: string }[] = [
  { name: 'empty', type: 'application/x-www-form-urlencoded', body: '' },
  {
    name: 'every field planted',
    type: 'application/x-www-form-urlencoded',
    body: new URLSearchParams(
      Object.fromEntries(
        [
          'workspace_id',
          'name',
          'seconds',
          'span',
          'time',
          'status',
          'stage',
          'count',
          'path',
          'sql',
          'export_id',
          'key',
          'bucket',
          'rule_id',
          'match_path',
          'detail',
          'revision_id',
          'deployment_id',
        ].map((field) => [field, PLANTED]),
      ),
    ).toString(),
  },
  {
    name: 'numbers out of range',
    type: 'application/x-www-form-urlencoded',
    body: 'seconds=-1e309&count=99999999999999999999&limit=-5&offset=NaN&probability=2',
  },
  { name: 'JSON', type: 'application/json', body: '{"workspace_id": [1, {"a": null}]' },
  {
    name: 'a broken multipart body',
    type: 'multipart/form-data; boundary=zzz',
    body: '--zzz\r\nContent-Disposition: form-data; name="x"\r\n\r\nunterminated',
  },
  { name: 'bytes that are not UTF-8', type: 'application/x-www-form-urlencoded', body: '%ff%fe=%c3%28' },
];

describe('the dashboard under input no form sends', () => {
  let found: { pages: string[]; actions: Target[] };

  beforeAll(async () => {
    found = await crawl();
  });

  it('the crawl reaches every view and actions on them', () => {
    for (const view of [
      '/ui',
      '/ui/exports',
      '/ui/objects',
      '/ui/sql',
      '/ui/deployments',
      '/ui/clock',
      '/ui/faults',
      '/ui/state',
    ])
      expect(found.pages).toContain(view);
    expect(found.actions.length).toBeGreaterThan(5);
  });

  it('answers every action without a 5xx, whatever its body, and reflects nothing as markup', async () => {
    for (const action of found.actions) {
      for (const { name, type, body } of BODIES) {
        const response = await lp.request(action.path, {
          method: 'POST',
          headers: { 'content-type': type, 'hx-request': 'true' },
          body,
        });
        const text = await response.text();
        expect(response.status, `POST ${action.path} with ${name}: ${text.slice(0, 300)}`).toBeLessThan(500);
        expect(text, `POST ${action.path} with ${name}`).not.toContain(PLANTED);
      }
    }
  });

  it('answers every page with query parameters planted, without a 5xx and without reflecting them', async () => {
    const planted = encodeURIComponent(PLANTED);
    for (const page of found.pages) {
      const [path, query = ''] = page.split('?') as [string, string?];
      const names = new Set([
        ...new URLSearchParams(query).keys(),
        'workspace_id',
        'limit',
        'offset',
        'prefix',
        'key',
        'sql',
        'status',
      ]);
      const url = `${path}?${[...names].map((name) => `${name}=${planted}`).join('&')}`;
      const response = await lp.request(url);
      const text = await response.text();
      expect(response.status, `GET ${url}: ${text.slice(0, 300)}`).toBeLessThan(500);
      expect(text, `GET ${url}`).not.toContain(PLANTED);
    }
  });
});
