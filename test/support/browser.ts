import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import type { Browser, BrowserContext, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Localplane } from '../../src/index.ts';
import { collectPageErrors, CONTEXT_DEFAULTS, launchChromium } from './chromium.ts';
import { REPO_ROOT } from './cli.ts';

export const SCREENSHOTS_DIR = join(REPO_ROOT, 'test-results', 'screenshots');

let launches = 0;

export interface BrowserSession {
  /** A page in a fresh browser context (own cookies and storage), closed after the test. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
  /**
   * A fresh page at `path` of the instance (or base URL); fails with the URL when the page does not load with a 2xx.
   */
  openDashboard(
    target: Pick<Localplane, 'apiUrl'> | string,
    path?: string,
    options?: BrowserContextOptions,
  ): Promise<Page>;
  /**
   * What went wrong in the current test's pages: uncaught exceptions, console errors (a 404 asset logs one), failed
   * requests.
   */
  readonly pageErrors: string[];
  /**
   * The processes of this file's browser that are still running (pid and name); none once the file's afterAll has run.
   */
  remainingProcesses(): string[];
}

/**
 * Launches one headless Chromium (launchChromium) for the calling test file, closed in its
 * afterAll, which fails the file if any of the browser's processes outlive it; gives each test
 * fresh contexts.
 */
export function useBrowser(): BrowserSession {
  // Every process the browser starts inherits this variable, even the crash handlers that detach
  // from it; the zygote's children do not, but stay in the browser's process group.
  const marker = `${process.pid}-${++launches}`;
  let browser: Browser | undefined;
  let processGroups = new Set<number>();
  let contexts: BrowserContext[] = [];
  const pageErrors: string[] = [];

  const remainingProcesses = () => browserProcesses(marker, processGroups).map(({ pid, name }) => `${pid} ${name}`);

  beforeAll(async () => {
    browser = await launchChromium({ LOCALPLANE_BROWSER_TEST: marker });
    // Playwright starts the browser detached, in a process group of its own; never the test process's.
    const ownGroup = readProcess('self')?.group;
    processGroups = new Set(
      browserProcesses(marker, new Set())
        .map(({ group }) => group)
        .filter((group) => group !== ownGroup),
    );
  });

  afterEach(async () => {
    const closing = contexts;
    contexts = [];
    pageErrors.length = 0;
    await Promise.all(closing.map((context) => context.close()));
  });

  afterAll(async () => {
    await browser?.close();
    browser = undefined;
    const leftover = await untilGone(() => browserProcesses(marker, processGroups));
    if (leftover.length > 0) {
      for (const { pid } of leftover) process.kill(pid, 'SIGKILL');
      throw new Error(
        `Chromium processes outlived the browser ` +
          `(killed): ${leftover.map(({ pid, name }) => `${pid} ${name}`).join(', ')}`,
      );
    }
  });

  async function newPage(options: BrowserContextOptions = {}): Promise<Page> {
    if (!browser) throw new Error('useBrowser(): the browser is launched in beforeAll; open pages inside tests');
    const context = await browser.newContext({ ...CONTEXT_DEFAULTS, ...options });
    contexts.push(context);
    const page = await context.newPage();
    collectPageErrors(page, pageErrors);
    return page;
  }

  async function openDashboard(
    target: Pick<Localplane, 'apiUrl'> | string,
    path = '/ui',
    options: BrowserContextOptions = {},
  ): Promise<Page> {
    const url = new URL(path, typeof target === 'string' ? target : target.apiUrl).href;
    const page = await newPage(options);
    const response = await page.goto(url);
    if (!response || !response.ok()) {
      const body = response ? (await response.text()).slice(0, 500) : '';
      throw new Error(`GET ${url} answered ${response ? response.status() : 'nothing'}${body ? `: ${body}` : ''}`);
    }
    return page;
  }

  return { newPage, openDashboard, pageErrors, remainingProcesses };
}

/**
 * Saves the whole page (or one part of it) as test-results/screenshots/<name>.png and prints that path, for the notes
 * that cite it.
 */
export async function screenshot(page: Page, name: string, part?: Locator): Promise<string> {
  if (!/^[\w.-]+$/.test(name))
    throw new Error(`screenshot name ${JSON.stringify(name)}: letters, digits, '.', '-' and '_' only`);
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  const path = join(SCREENSHOTS_DIR, `${name}.png`);
  const options = { path, animations: 'disabled', caret: 'hide' } as const;
  await (part ? part.screenshot(options) : page.screenshot({ ...options, fullPage: true }));
  console.log(`screenshot: ${relative(REPO_ROOT, path)}`);
  return path;
}

const AXE_SOURCE_PATH = join(dirname(createRequire(import.meta.url).resolve('axe-core/package.json')), 'axe.min.js');
let axeSource: string | undefined;

export interface AccessibilityViolation {
  id: string;
  impact: 'minor' | 'moderate' | 'serious' | 'critical' | null;
  help: string;
  helpUrl: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * Runs axe-core (from node_modules; the page needs no network and no script of its own) over the
 * page as it is now, and throws a readable list when it finds a serious or critical violation.
 * Returns every violation, the minor and moderate ones included.
 */
export async function checkAccessibility(page: Page): Promise<AccessibilityViolation[]> {
  axeSource ??= readFileSync(AXE_SOURCE_PATH, 'utf8');
  // evaluate, not a <script> tag: a page's Content-Security-Policy does not apply to it.
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const { axe } = window as unknown as {
      axe: { run(context: Document, options: object): Promise<{ violations: AccessibilityViolation[] }> };
    };
    const results = await axe.run(document, { resultTypes: ['violations'] });
    return results.violations.map(({ id, impact, help, helpUrl, nodes }) => ({
      id,
      impact,
      help,
      helpUrl,
      nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })),
    }));
  });
  const blocking = violations.filter(({ impact }) => impact === 'serious' || impact === 'critical');
  if (blocking.length > 0)
    throw new Error(
      `axe-core finds ${blocking.length} serious or critical violations ` +
        `on ${page.url()}:\n${describeViolations(blocking)}`,
    );
  return violations;
}

export function describeViolations(violations: AccessibilityViolation[]): string {
  return violations
    .map(({ id, impact, help, helpUrl, nodes }) => {
      const shown = nodes.slice(0, 5).map(({ target, failureSummary }) => {
        const summary = (failureSummary ?? '')
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean)
          .slice(1, 3)
          .join(' ');
        return `    ${target.join(' ')}${summary ? `: ${summary}` : ''}`;
      });
      if (nodes.length > shown.length) shown.push(`    and ${nodes.length - shown.length} more`);
      return [`- ${id} (${impact}): ${help} ${helpUrl}`, ...shown].join('\n');
    })
    .join('\n');
}

interface BrowserProcess {
  pid: number;
  name: string;
  group: number;
}

/** The running processes that carry the marker in their environment or belong to one of the groups (Linux /proc). */
function browserProcesses(marker: string, groups: Set<number>): BrowserProcess[] {
  if (!existsSync('/proc/self/stat')) return [];
  const found: BrowserProcess[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const running = readProcess(entry);
      if (!running) continue;
      if (
        groups.has(running.group) ||
        readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0').includes(`LOCALPLANE_BROWSER_TEST=${marker}`)
      )
        found.push(running);
    } catch {
      // Gone meanwhile, or another user's process.
    }
  }
  return found;
}

/** A process's name and group from /proc/<pid>/stat; undefined for a zombie, which is gone but for its exit status. */
function readProcess(entry: string): BrowserProcess | undefined {
  const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
  // pid (name) state ppid pgrp ...: the name may hold spaces and parentheses.
  const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (state === 'Z') return undefined;
  return {
    pid: Number(stat.slice(0, stat.indexOf(' '))),
    name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    group: Number(group),
  };
}

/**
 * Waits for processes that are exiting (Chromium's helpers exit just after the browser); returns those still there
 * after 10 s.
 */
async function untilGone(list: () => BrowserProcess[]): Promise<BrowserProcess[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const remaining = list();
    if (remaining.length === 0 || Date.now() > deadline) return remaining;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
