/**
 * Where a destination may send (issue 35): loopback, the instance's own objstore and the production
 * endpoints it serves. Any other endpoint_url is a 400 that names --allow-endpoints, and nothing is
 * sent to it; `allowedEndpoints` opens one host on purpose. 0.0.0.0, which reaches this machine
 * without being a loopback name, stands for any other host: a listener there counts what arrives.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsOf, fullKey, useLocalplane, workspaceByTier, type TestContext } from '../support/instance.ts';

let listener: Server;
let port: number;
let received: string[] = [];
beforeAll(async () => {
  listener = createServer((req, res) => {
    received.push(`${req.method} ${req.url}`);
    res
      .writeHead(403, { 'content-type': 'application/xml' })
      .end('<Error><Code>AccessDenied</Code><Message>listener says no</Message></Error>');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  port = (listener.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => listener.close(resolve));
});

const createDestination = (ctx: TestContext, endpointUrl: string) =>
  ctx.api.as(workspaceByTier(ctx.fixtures, 'plus')).post('/api/v1/bulk-exports/destinations', {
    display_name: 'reach',
    config: { bucket_name: 'exports', prefix: 'reach', endpoint_url: endpointUrl },
    credentials: credentialsOf(fullKey(ctx.fixtures)),
  });

describe('by default', () => {
  const ctx = useLocalplane({ freezeClock: true });

  it('refuses an endpoint elsewhere with a 400 naming --allow-endpoints, and sends it nothing', async () => {
    received = [];
    const response = await createDestination(ctx, `http://0.0.0.0:${port}`);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      detail: expect.stringContaining(
        `Invalid endpoint: http://0.0.0.0:${port}: localplane sends only to loopback, its own objstore and the ` +
          `production endpoints it serves; ` +
          `start it with --allow-endpoints 0.0.0.0:${port} (LOCALPLANE_ALLOW_ENDPOINTS) to send there`,
      ),
    });
    expect(received).toEqual([]);
  });

  it('sends to loopback, its own objstore and the production endpoints it serves', async () => {
    for (const endpoint of [
      ctx.fixtures.objstore.endpoint_url,
      'https://storage.googleapis.com',
      'https://s3.eu-west-1.amazonaws.com',
    ]) {
      const response = await createDestination(ctx, endpoint);
      expect(response.status, `${endpoint}: ${response.text}`).toBe(200);
    }
    received = [];
    const response = await createDestination(ctx, `http://localhost:${port}`);
    expect(response.text).toContain('listener says no');
    expect(received.length).toBeGreaterThan(0);
  });
});

describe('with allowedEndpoints', () => {
  const ctx = useLocalplane({ freezeClock: true, allowedEndpoints: ['0.0.0.0'] });

  it('sends to the host allowed', async () => {
    received = [];
    const response = await createDestination(ctx, `http://0.0.0.0:${port}`);
    expect(response.text).toContain('listener says no');
    expect(received.length).toBeGreaterThan(0);
  });
});
