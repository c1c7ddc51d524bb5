/**
 * The admin API refuses what a hostile web page could send: requests under a foreign Host (DNS
 * rebinding) and state-changing requests from another origin (cross-site form posts and fetches).
 * Clients that are not browsers send neither header and pass, as before.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { start, type Localplane } from '../../src/index.ts';
import { rawRequest } from '../support/objstore-server.ts';

let lp: Localplane;
let allowing: Localplane;
let port: string;

beforeAll(async () => {
  [lp, allowing] = await Promise.all([
    start({ port: 0, objstorePort: 0, log: () => {} }),
    start({ port: 0, objstorePort: 0, log: () => {}, allowedHosts: ['localplane', 'Dev-Box.example.'] }),
  ]);
  port = new URL(lp.apiUrl).port;
});

afterAll(async () => {
  await Promise.all([lp?.stop(), allowing?.stop()]);
});

const send = (instance: Localplane, method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  rawRequest(
    instance.apiUrl,
    method,
    path,
    { 'content-type': 'application/json', ...headers },
    body === undefined ? undefined : JSON.stringify(body),
  );

const detailOf = (reply: { body: string }) => (JSON.parse(reply.body) as { detail: string }).detail;
const clockIsFrozen = async () =>
  (JSON.parse((await send(lp, 'GET', '/_localplane/clock', {})).body) as { frozen: boolean }).frozen;

describe('a foreign Host (DNS rebinding)', () => {
  it('cannot make the admin API write a snapshot: 403 with a clear detail, and no file', async () => {
    const file = join(lp.snapshotsDir, 'rebound.snapshot');
    const refused = await send(
      lp,
      'POST',
      '/_localplane/snapshot',
      { host: `evil.example:${port}` },
      { name: 'rebound.snapshot' },
    );
    expect(refused.status).toBe(403);
    expect(detailOf(refused)).toBe(
      `Host "evil.example:${port}" is not a name localplane answers under: it answers loopback names (localhost, ` +
        `127.0.0.1) and the host it is bound to; allow others with --allow-hosts (LOCALPLANE_ALLOW_HOSTS, ` +
        `allowedHosts)`,
    );
    expect(existsSync(file)).toBe(false);

    const allowed = await send(
      lp,
      'POST',
      '/_localplane/snapshot',
      { host: `127.0.0.1:${port}` },
      { name: 'rebound.snapshot' },
    );
    expect(allowed.status).toBe(200);
    expect(existsSync(file)).toBe(true);
  });

  it('cannot read the admin API either (fixtures hold keys)', async () => {
    expect((await send(lp, 'GET', '/_localplane/fixtures', { host: 'evil.example' })).status).toBe(403);
    expect((await send(lp, 'GET', '/_localplane/fixtures', { host: `127.0.0.1:${port}` })).status).toBe(200);
  });

  it.each(['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.1.2.3', '[::1]'])(
    'passes under the loopback name %s',
    async (name) => {
      expect((await send(lp, 'GET', '/_localplane/health', { host: `${name}:${port}` })).status).toBe(200);
    },
  );

  it('passes under the names given in allowedHosts, case and a trailing dot aside, and only there', async () => {
    const allowingPort = new URL(allowing.apiUrl).port;
    for (const name of ['localplane', 'dev-box.example', 'DEV-BOX.EXAMPLE.']) {
      expect(
        (await send(allowing, 'GET', '/_localplane/health', { host: `${name}:${allowingPort}` })).status,
        name,
      ).toBe(200);
    }
    expect((await send(allowing, 'GET', '/_localplane/health', { host: `evil.example:${allowingPort}` })).status).toBe(
      403,
    );
    expect((await send(lp, 'GET', '/_localplane/health', { host: `localplane:${port}` })).status).toBe(403);
  });

  it('refuses the service API too, whatever API key it carries: a rebinding page knows the published ones', async () => {
    const { workspaces } = JSON.parse((await send(lp, 'GET', '/_localplane/fixtures', {})).body) as {
      workspaces: { id: string; api_key: string }[];
    };
    const auth = { 'x-api-key': workspaces[0]!.api_key };
    const reply = await send(lp, 'GET', '/api/v1/bulk-exports/destinations', {
      ...auth,
      host: `rebind.evil.example:${port}`,
    });
    expect(reply.status).toBe(403);
    expect(detailOf(reply)).toMatch(
      /^Host "rebind\.evil\.example:\d+" is not a name localplane answers under: .* --allow-hosts/,
    );
    const created = await send(
      lp,
      'POST',
      '/v2/deployments',
      { ...auth, host: 'rebind.evil.example' },
      { name: 'rebound', source: 'internal_docker' },
    );
    expect(created.status).toBe(403);
    expect(
      (await send(lp, 'GET', '/api/v1/bulk-exports/destinations', { ...auth, host: `127.0.0.1:${port}` })).status,
    ).toBe(200);
    expect((await send(lp, 'GET', '/no/such/route', { host: 'rebind.evil.example' })).status).toBe(403);
  });

  it('refuses the objstore too: an S3 AccessDenied document naming the flag, and under the allowed names it answers', async () => {
    const objstorePort = new URL(lp.objstoreUrl).port;
    const refused = await rawRequest(lp.objstoreUrl, 'GET', '/public-datasets?list-type=2', {
      host: `rebind.evil.example:${objstorePort}`,
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('<Code>AccessDenied</Code>');
    expect(refused.body).toContain(
      `Host &quot;rebind.evil.example:${objstorePort}&quot; is not a name localplane answers under`,
    );
    expect(
      (await rawRequest(lp.objstoreUrl, 'GET', '/public-datasets?list-type=2', { host: `127.0.0.1:${objstorePort}` }))
        .status,
    ).toBe(200);
    const allowingObjstore = new URL(allowing.objstoreUrl);
    expect(
      (
        await rawRequest(allowing.objstoreUrl, 'GET', '/public-datasets?list-type=2', {
          host: `localplane:${allowingObjstore.port}`,
        })
      ).status,
    ).toBe(200);
  });
});

describe('a state-changing request from another origin', () => {
  it('a cross-site form post cannot reset the instance; the same request from its own origin can', async () => {
    expect((await send(lp, 'POST', '/_localplane/clock/freeze', {})).status).toBe(200);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };

    const crossSite = await send(
      lp,
      'POST',
      '/_localplane/reset',
      { ...form, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      {},
    );
    expect(crossSite.status).toBe(403);
    expect(detailOf(crossSite)).toBe(
      `Cross-origin POST refused: the admin API and the dashboard take changes only from their own origin ` +
        `http://127.0.0.1:${port}, not https://evil.example`,
    );
    expect(await clockIsFrozen()).toBe(true);

    const sameOrigin = await send(
      lp,
      'POST',
      '/_localplane/reset',
      { origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' },
      {},
    );
    expect(sameOrigin.status).toBe(200);
    expect(await clockIsFrozen()).toBe(false);
  });

  it.each([
    ['another port of this machine (same-site, no Origin sent)', { 'sec-fetch-site': 'same-site' }],
    ['an opaque origin (a sandboxed frame, a file: page)', { origin: 'null' }],
    ['another origin, without Fetch Metadata', { origin: 'http://localhost:3000' }],
  ])('refuses %s', async (_what, headers) => {
    const reply = await send(lp, 'POST', '/_localplane/clock/freeze', headers);
    expect(reply.status).toBe(403);
    expect(detailOf(reply)).toMatch(/^Cross-origin POST refused: /);
    expect(await clockIsFrozen()).toBe(false);
  });

  it(
    'passes reads, whose answers the browser keeps from another origin (no CORS headers), and changes from a ' +
      'typed URL or a client without browser headers',
    async () => {
      const read = await send(lp, 'GET', '/_localplane/health', {
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
      });
      expect(read.status).toBe(200);
      expect(read.headers['access-control-allow-origin']).toBeUndefined();
      expect((await send(lp, 'POST', '/_localplane/clock/freeze', { 'sec-fetch-site': 'none' })).status).toBe(200);
      expect((await send(lp, 'POST', '/_localplane/clock/unfreeze', {})).status).toBe(200);
    },
  );
});

describe('the served document', () => {
  it('lists the 403 on every admin route', async () => {
    const document = (await (await fetch(`${lp.apiUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>;
    };
    const adminOperations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith('/_localplane/'))
      .flatMap(([path, operations]) =>
        Object.entries(operations).map(([method, operation]) => ({
          route: `${method} ${path}`,
          statuses: Object.keys(operation.responses),
        })),
      );
    expect(adminOperations.length).toBeGreaterThan(20);
    for (const { route, statuses } of adminOperations) expect(statuses, route).toContain('403');
    expect(JSON.stringify(document.paths['/_localplane/reset']!.post!.responses['403'])).toContain('DNS rebinding');
    expect(JSON.stringify(document.paths['/v2/deployments']!.get!.responses['403'] ?? {})).not.toContain(
      'DNS rebinding',
    );
  });
});

describe('a token (adminToken, --admin-token)', () => {
  const TOKEN = 'tok-3f2b8c1e5d4a';
  let guarded: Localplane;
  const lines: string[] = [];

  beforeAll(async () => {
    guarded = await start({ port: 0, objstorePort: 0, log: (line) => lines.push(line), adminToken: TOKEN });
  });
  afterAll(async () => {
    await guarded?.stop();
  });

  it('is required of admin requests over the network: 401 with WWW-Authenticate without it or with another', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-the-token' }, { authorization: TOKEN }] as Record<
      string,
      string
    >[]) {
      const reply = await send(guarded, 'GET', '/_localplane/health', headers);
      expect(reply.status).toBe(401);
      expect(reply.headers['www-authenticate']).toBe('Bearer realm="localplane"');
      expect(detailOf(reply)).toContain('Authorization: Bearer <token>');
      expect(reply.body).not.toContain(TOKEN);
    }
    expect((await send(guarded, 'POST', '/_localplane/reset', {})).status).toBe(401);
    expect((await send(guarded, 'GET', '/ui', {})).status).toBe(401);
    expect((await send(guarded, 'GET', '/_localplane/health', { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
  });

  it('opens the dashboard from a link once: a strict HttpOnly cookie, and the same URL without the token', async () => {
    const opened = await send(guarded, 'GET', `/ui?token=${TOKEN}&status=5xx`, {});
    expect(opened.status).toBe(303);
    expect(opened.headers.location).toBe('/ui?status=5xx');
    const cookie = String(opened.headers['set-cookie']);
    expect(cookie).toMatch(/^localplane_token=[^;]+; Path=\/; HttpOnly; SameSite=Strict$/);
    const withCookie = await send(guarded, 'GET', '/ui', { cookie: cookie.split(';')[0]! });
    expect(withCookie.status).toBe(200);
    expect((await send(guarded, 'GET', '/ui?token=wrong-token-123', {})).status).toBe(401);
  });

  it(
    'is not asked of in-process requests, nor of the service API, and the document lists the 401 and the token ' +
      "as the admin routes' security",
    async () => {
      expect((await guarded.request('/_localplane/health')).status).toBe(200);
      expect((await guarded.request('/ui')).status).toBe(200);
      expect((await send(guarded, 'GET', '/v2/deployments', {})).status).toBe(401);
      expect(detailOf(await send(guarded, 'GET', '/v2/deployments', {}))).not.toContain(
        'token localplane was started with',
      );
      type Operation = { responses: Record<string, unknown>; security?: Record<string, string[]>[] };
      const document = (await (await fetch(`${guarded.apiUrl}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, Operation>>;
        components: { securitySchemes: Record<string, unknown> };
      };
      expect(document.paths['/_localplane/reset']!.post!.responses).toHaveProperty('401');
      expect(document.components.securitySchemes['Admin Token']).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(document.paths['/_localplane/reset']!.post!.security).toEqual([{ 'Admin Token': [] }]);
      expect(JSON.stringify(document.paths['/v2/deployments']!.get!.security)).not.toContain('Admin Token');
      expect(document.paths['/docs']!.get!.security).toBeUndefined();
      // The lp started without a token names none.
      const open = (await (await fetch(`${lp.apiUrl}/openapi.json`)).json()) as typeof document;
      expect(open.components.securitySchemes).not.toHaveProperty('Admin Token');
      expect(open.paths['/_localplane/reset']!.post!.security).toBeUndefined();
    },
  );

  it('is never logged, and an instance with it bound to loopback gives no warning', () => {
    expect(lines.join('\n')).not.toContain(TOKEN);
    expect(lines.join('\n')).not.toContain('other machines can reach');
  });

  it('refuses a malformed token before anything starts', async () => {
    await expect(start({ port: 0, objstorePort: 0, log: () => {}, adminToken: 'short' })).rejects.toThrow(
      'adminToken must be 8 to 256 printable characters',
    );
    await expect(start({ port: 0, objstorePort: 0, log: () => {}, adminToken: 'has a space in it' })).rejects.toThrow(
      RangeError,
    );
  });
});

describe('bound to a non-loopback host', () => {
  it('warns at start without a token, and not with one', async () => {
    const lines: string[] = [];
    const open = await start({ host: '0.0.0.0', port: 0, objstorePort: 0, log: (line) => lines.push(line) });
    await open.stop();
    expect(lines.filter((line) => line.includes('bound to 0.0.0.0, which other machines can reach'))).toHaveLength(1);
    expect(lines.join('\n')).toContain('--admin-token');
    const quiet: string[] = [];
    const guarded = await start({
      host: '0.0.0.0',
      port: 0,
      objstorePort: 0,
      log: (line) => quiet.push(line),
      adminToken: 'tok-0a1b2c3d4e5f',
    });
    await guarded.stop();
    expect(quiet.join('\n')).not.toContain('other machines can reach');
  });
});
