/**
 * The dashboard with a full journal: /ui's first views loaded in Debian's chromium (a fresh context each time: nothing
 * cached) with 10,000 entries (the goal's) and 100,000, their bytes, journal filters over HTTP, and a burst of requests
 * with and without the Requests view watching live. No peer has a dashboard to set beside it, so each figure is set
 * beside its goal.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { start, type Localplane } from '../../src/localplane.ts';
import { SEEDED_API_KEY } from './client.ts';
import { allowedCpuList, describeLoad, type Generator, type Placement, runLoad } from './load.ts';
import { onCpu, spawnLocalplane } from './processes.ts';
import { goal, median, medianAndRange, milliseconds, percent, perSecond, type Row } from './report.ts';

const JOURNAL_ENTRIES = 100_000;
/** The journal sizes the first views are loaded with: the goal's, and the full journal's. */
const FIRST_VIEW_JOURNALS = [10_000, JOURNAL_ENTRIES];
const FIRST_VIEW_GOAL_MS = 300;
const FILTER_GOAL_MS = 200;
const FIRST_VIEW_BYTES_GOAL = 150 * 1024;
const CHROMIUM = process.env.LOCALPLANE_CHROMIUM ?? '/usr/bin/chromium';

/** A user's mix up to `entries`: lists of destinations and deployments, and bodies the API refuses. */
async function fillJournal(lp: Localplane, apiKey: string, entries: number): Promise<void> {
  const headers = { 'x-api-key': apiKey };
  const { count } = (await (await lp.request('/_localplane/requests/count')).json()) as { count: number };
  for (let i = count; i < entries; i++) {
    const kind = i % 10;
    const response =
      kind < 7
        ? await lp.request('/api/v1/bulk-exports/destinations', { headers })
        : kind < 9
          ? await lp.request('/v2/deployments?limit=5', { headers })
          : await lp.request('/api/v1/bulk-exports', {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify({ bulk_export_destination_id: 'nope' }),
            });
    await response.arrayBuffer();
  }
}

/**
 * Filters of the Requests view over the full journal: one that stops early, one that reads every entry, one that reads
 * every body.
 */
const FILTERS: [what: string, query: string][] = [
  ['newest 100 of the 4xx under a path glob', 'status=4xx&path=/api/v1/**&limit=100&order=desc'],
  ['a filter no entry matches (every entry read)', 'status=5xx&path=/nowhere/**&limit=100&order=desc'],
  ['text in either body (every body read)', 'any_body_contains=not-in-any-body&limit=100&order=desc'],
];

function filterRow(what: string, times: number[], samples: number): Row {
  return {
    what: `journal filter over HTTP, ${JOURNAL_ENTRIES.toLocaleString('en')} entries: ${what} (${samples} requests)`,
    localplane: medianAndRange(times, milliseconds),
    peer: 'none in the same run: the goal',
    peerFigure: milliseconds(FILTER_GOAL_MS),
    ratio: `${(median(times) / FILTER_GOAL_MS).toFixed(2)}×`,
    goal: goal(`≤ ${FILTER_GOAL_MS} ms`, median(times) <= FILTER_GOAL_MS),
  };
}

/** A burst of API requests, with and without the Requests view open live beside it. */
const BURST_CONNECTIONS = 10;
const LIVE_VIEW_GOAL = 0.8;
const BURST_PATH = '/api/v1/bulk-exports/destinations';

/** A process's CPU time so far (user and system), in seconds, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime, the 14th and 15th fields, in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Moves every thread of this process to `cpu` (undefined: leaves it); returns what moves it back. Playwright here
 * receives a protocol event for each of the page's stream messages, work that is the viewer's, not the server's.
 */
function keepThisProcessOn(cpu: number | undefined): () => void {
  const allowed = allowedCpuList();
  if (cpu === undefined || allowed === undefined) return () => {};
  const move = (list: string) =>
    execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', list, String(process.pid)]);
  move(String(cpu));
  return () => move(allowed);
}

interface Burst {
  requestsPerSecond: number;
  /** The server's CPU time a request, in milliseconds. */
  cpuMs: number;
}

export interface LiveViewSettings {
  runs: number;
  seconds: number;
  generator: Generator;
  /** Undefined: the server, the generator and chromium share every CPU. */
  placement: Placement | undefined;
  scratch: string;
  log: (line: string) => void;
}

/**
 * The burst's rate and the server's CPU time a request with no viewer and with /ui/requests open in chromium (live,
 * as a person watches it: its stream read and its rows drawn), in turns, `runs` of each; the page is then waited on
 * to show the burst's last request. Pinned, the server runs on one CPU, and the load generator and chromium on the
 * other: what watching costs is the server's own work for its viewer.
 */
export async function measureLiveView(settings: LiveViewSettings): Promise<Row[]> {
  const { placement } = settings;
  const server = await spawnLocalplane({ cpu: placement?.serverCpu });
  const moveBack = keepThisProcessOn(placement?.loadCpu);
  // chromium started through taskset keeps to the load's CPU, its renderers too.
  const launcher = join(settings.scratch, 'chromium-on-load-cpu');
  writeFileSync(launcher, `#!/bin/sh\nexec ${onCpu(placement?.loadCpu, [CHROMIUM]).join(' ')} "$@"\n`, { mode: 0o755 });
  const browser = await chromium.launch({
    executablePath: launcher,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  const burst = async (): Promise<Burst> => {
    const before = cpuSeconds(server.pid);
    const { requestsPerSecond } = await runLoad(
      settings.generator,
      {
        url: `${server.apiUrl}${BURST_PATH}`,
        connections: BURST_CONNECTIONS,
        seconds: settings.seconds,
        headers: { 'X-API-Key': SEEDED_API_KEY },
      },
      placement?.loadCpu,
    );
    const requests = requestsPerSecond * settings.seconds;
    return { requestsPerSecond, cpuMs: ((cpuSeconds(server.pid) - before) * 1000) / requests };
  };
  try {
    const alone: Burst[] = [];
    const watched: Burst[] = [];
    await burst(); // warm-up
    for (let run = 0; run < settings.runs; run++) {
      alone.push(await burst());
      const context = await browser.newContext();
      try {
        const page = await context.newPage();
        await page.goto(`${server.apiUrl}/ui/requests`, { waitUntil: 'load' });
        await page.waitForFunction(() => document.querySelector('#requests-live[sse-connect]') !== null);
        watched.push(await burst());
        const newest = (await (await fetch(`${server.apiUrl}/_localplane/requests?order=desc&limit=1`)).json()) as {
          requests: { id: number }[];
        };
        await page.waitForSelector(`#request-${newest.requests[0]!.id}`, { timeout: 60_000 });
      } finally {
        await context.close();
      }
    }
    const rates = (bursts: Burst[]) => bursts.map((one) => one.requestsPerSecond);
    const cpu = (bursts: Burst[]) => bursts.map((one) => one.cpuMs);
    const ratio = median(rates(watched)) / median(rates(alone));
    const cpuRatio = median(cpu(watched)) / median(cpu(alone));
    const load = describeLoad(settings.generator, BURST_CONNECTIONS, placement);
    const what = `${settings.seconds} s bursts of ${load} (${settings.runs} runs)`;
    const cpuFigure = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
    return [
      {
        what: `dashboard: ${what}, no viewer`,
        localplane: medianAndRange(rates(alone), perSecond),
        peer: 'none: the row below is set beside it',
        peerFigure: '—',
        ratio: '—',
        goal: '—',
      },
      {
        what: `dashboard: the same, /ui/requests open live in chromium`,
        localplane: medianAndRange(rates(watched), perSecond),
        peer: 'the same bursts with no viewer',
        peerFigure: perSecond(median(rates(alone))),
        ratio: percent(ratio),
        goal: goal(`≥ ${percent(LIVE_VIEW_GOAL)} of it`, ratio >= LIVE_VIEW_GOAL),
      },
      {
        what: "dashboard: the server's CPU time a request in those bursts, /ui/requests open live",
        localplane: medianAndRange(cpu(watched), cpuFigure),
        peer: 'the same with no viewer',
        peerFigure: medianAndRange(cpu(alone), cpuFigure),
        ratio: `${cpuRatio.toFixed(2)}×`,
        goal: goal(`≤ ${(1 / LIVE_VIEW_GOAL).toFixed(2)}×`, cpuRatio <= 1 / LIVE_VIEW_GOAL),
      },
    ];
  } finally {
    await browser.close();
    await server.stop();
    moveBack();
  }
}

interface FirstView {
  ms: number;
  bytes: number;
}

/** Navigation start to the load event, and every byte the page fetched (compressed as sent). */
async function firstView(browser: Browser, url: string): Promise<FirstView> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const response = await page.goto(url, { waitUntil: 'load' });
    if (!response?.ok()) throw new Error(`${url} answered ${response?.status()}`);
    return await page.evaluate(() => {
      const [navigation] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
      const entries = [navigation!, ...(performance.getEntriesByType('resource') as PerformanceResourceTiming[])];
      return { ms: navigation!.loadEventEnd, bytes: entries.reduce((sum, entry) => sum + entry.encodedBodySize, 0) };
    });
  } finally {
    await context.close();
  }
}

async function timeFetch(url: string): Promise<number> {
  const before = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return performance.now() - before;
}

/** The first views of /ui and /ui/requests, `samples` loads each after one to warm the server: their time and bytes. */
async function firstViewRows(browser: Browser, apiUrl: string, entries: number, samples: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (const path of ['/ui', '/ui/requests']) {
    await firstView(browser, `${apiUrl}${path}`); // warm-up: the server's modules and assets loaded
    const runs: FirstView[] = [];
    for (let i = 0; i < samples; i++) runs.push(await firstView(browser, `${apiUrl}${path}`));
    const ms = runs.map((run) => run.ms);
    const bytes = median(runs.map((run) => run.bytes));
    rows.push({
      what:
        `dashboard: ${path} first view in chromium, fresh ` +
        `context, ${entries.toLocaleString('en')}-entry journal (${samples} loads)`,
      localplane: medianAndRange(ms, milliseconds),
      peer: 'none in the same run: the goal',
      peerFigure: milliseconds(FIRST_VIEW_GOAL_MS),
      ratio: `${(median(ms) / FIRST_VIEW_GOAL_MS).toFixed(2)}×`,
      goal: goal(`≤ ${FIRST_VIEW_GOAL_MS} ms`, median(ms) <= FIRST_VIEW_GOAL_MS),
    });
    rows.push({
      what:
        `dashboard: ${path} first view with a ${entries.toLocaleString('en')}-entry journal, ` +
        'bytes transferred (HTML, CSS, JS)',
      localplane: `${(bytes / 1024).toFixed(1)} KB`,
      peer: 'none in the same run: the goal',
      peerFigure: `${FIRST_VIEW_BYTES_GOAL / 1024} KB`,
      ratio: `${(bytes / FIRST_VIEW_BYTES_GOAL).toFixed(2)}×`,
      goal: goal(`≤ ${FIRST_VIEW_BYTES_GOAL / 1024} KB`, bytes <= FIRST_VIEW_BYTES_GOAL),
    });
  }
  return rows;
}

export async function measureDashboard(settings: LiveViewSettings): Promise<Row[]> {
  const lp = await start({ port: 0, objstorePort: 0, journalCapacity: JOURNAL_ENTRIES, log: () => {} });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  const rows: Row[] = [];
  try {
    const samples = Math.max(settings.runs, 10);
    for (const entries of FIRST_VIEW_JOURNALS) {
      await fillJournal(lp, SEEDED_API_KEY, entries);
      settings.log(`dashboard: ${entries.toLocaleString('en')} entries in the journal`);
      rows.push(...(await firstViewRows(browser, lp.apiUrl, entries, samples)));
    }
    for (const [what, query] of FILTERS) {
      const url = `${lp.apiUrl}/_localplane/requests?${query}`;
      const first = await timeFetch(url);
      const times: number[] = [];
      for (let i = 0; i < samples; i++) times.push(await timeFetch(url));
      rows.push(filterRow(`${what}; the first request ${milliseconds(first)}`, times, samples));
    }
  } finally {
    await browser.close();
    await lp.stop();
  }
  rows.push(...(await measureLiveView(settings)));
  return rows;
}
