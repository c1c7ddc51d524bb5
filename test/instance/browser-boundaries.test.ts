/**
 * What a page on another origin can do to localplane in Chromium (issue 35): it cannot frame an HTML
 * answer of the API port and have its buttons clicked (/docs' "Try it out"), and HTML stored in the
 * objstore opened as a page runs no script on the objstore's origin.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot, useBrowser } from '../support/browser.ts';
import { fullKey, useLocalplane } from '../support/instance.ts';
import { s3For } from '../support/objstore.ts';

const ctx = useLocalplane({ freezeClock: true });
const browser = useBrowser();

/** Another origin (another port of loopback): a page that frames `framed`. */
let foreign: Server;
let foreignUrl: string;
let framed = '';
beforeAll(async () => {
  foreign = createServer((_, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<!doctype html><iframe id="victim" src="${framed}"></iframe>`),
  );
  await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
  foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise((resolve) => foreign.close(resolve));
});

describe('the HTML answers of the API port', () => {
  it.each(['/docs', '/ui', '/ui/clock', '/ui/exports/00000000-0000-4000-8000-000000000000'])(
    'refuse to be framed: %s',
    async (path) => {
      const response = await ctx.instance.request(path);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('content-security-policy')).toMatch(/(^|; )frame-ancestors 'none'/);
    },
  );

  it('leave JSON answers as they were', async () => {
    const response = await ctx.instance.request('/_localplane/health');
    expect(response.headers.get('x-frame-options')).toBeNull();
    expect(response.headers.get('content-security-policy')).toBeNull();
  });

  it('/docs framed by a page of another origin shows nothing of it in Chromium', async () => {
    framed = `${ctx.instance.apiUrl}/docs`;
    const page = await browser.newPage();
    const refusals: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('frame-ancestors')) refusals.push(message.text());
    });
    await page.goto(foreignUrl);
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    expect(frame).toBeDefined();
    await expect.poll(() => refusals.length).toBeGreaterThan(0);
    // Chromium puts its own error page in the frame: no Swagger UI, so no "Try it out" to click.
    expect(await frame!.locator('#swagger-ui').count()).toBe(0);
    await screenshot(page, 'docs-framed-by-another-origin');
  });
});

describe('an object opened in a browser', () => {
  it('runs no script: stored HTML is sandboxed and never sniffed', async () => {
    const writer = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
    const page =
      `<!doctype html><title>stored</title><script>document.title = 'script ran'; ` +
      `fetch('/private-bucket/x')</script>`;
    await writer.send(
      new PutObjectCommand({ Bucket: 'public-datasets', Key: 'page.html', Body: page, ContentType: 'text/html' }),
    );
    const url = `${ctx.instance.objstoreUrl}/public-datasets/page.html`;

    const answer = await fetch(url);
    expect(answer.headers.get('content-security-policy')).toBe('sandbox');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');

    const tab = await browser.newPage();
    await tab.goto(url);
    expect(await tab.title()).toBe('stored');
    // A sandboxed document has an opaque origin: it reaches nothing of the objstore's own.
    expect(await tab.evaluate(() => window.origin)).toBe('null');
  });

  it("is inert on the dashboard's origin too, and never framed", async () => {
    const writer = s3For(ctx.instance.objstoreUrl, fullKey(ctx.fixtures));
    await writer.send(
      new PutObjectCommand({
        Bucket: 'public-datasets',
        Key: 'framed.html',
        Body: '<!doctype html><p>stored',
        ContentType: 'text/html',
      }),
    );
    const answer = await ctx.instance.request(
      '/_localplane/objstore/buckets/public-datasets/object/content?key=framed.html',
    );
    expect(answer.headers.get('content-type')).toBe('text/html');
    expect(answer.headers.get('content-security-policy')).toBe("sandbox; frame-ancestors 'none'");
    expect(answer.headers.get('x-frame-options')).toBe('DENY');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
