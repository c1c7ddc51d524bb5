import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';

/** Debian's chromium package; LOCALPLANE_CHROMIUM names another Chromium build. */
const CHROMIUM = process.env.LOCALPLANE_CHROMIUM ?? '/usr/bin/chromium';

/** Same pictures from run to run: a fixed viewport and scale, no motion, one locale and time zone. */
export const CONTEXT_DEFAULTS: BrowserContextOptions = {
  viewport: { width: 1280, height: 800 },
  deviceScaleFactor: 1,
  colorScheme: 'light',
  reducedMotion: 'reduce',
  locale: 'en-US',
  timezoneId: 'UTC',
};

/**
 * A headless Chromium, offline: no host but the loopback ones resolves, so a page that loads
 * anything from elsewhere fails to.
 *
 * The sandbox is on unless this process runs as root: Chromium refuses to start as root with its
 * sandbox ("Running as root without --no-sandbox is not supported", crbug.com/638180), as in
 * containers and CI runners that run as root; as any other user Debian's setuid chrome-sandbox
 * helper (or user namespaces) provides it.
 */
export async function launchChromium(env: Record<string, string> = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's chromium package (apt-get install chromium) or set ` +
        `LOCALPLANE_CHROMIUM to a Chromium executable`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    chromiumSandbox: process.getuid?.() !== 0,
    env: { ...process.env, ...env },
    args: ['--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE [::1]'],
  });
}

/**
 * Adds to `errors` what goes wrong in the page: uncaught exceptions, console errors (a 404 asset
 * logs one), failed requests. A background request the browser itself aborted (net::ERR_ABORTED:
 * a refresh still under way when the page navigates away, as a busy machine makes likely) is not
 * a failure of the page.
 */
export function collectPageErrors(page: Page, errors: string[]): void {
  page.on('pageerror', (error) => errors.push(`uncaught ${error.name}: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()} (${message.location().url})`);
  });
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText;
    if (reason === 'net::ERR_ABORTED' && !request.isNavigationRequest()) return;
    errors.push(`${request.method()} ${request.url()} failed: ${reason}`);
  });
}
