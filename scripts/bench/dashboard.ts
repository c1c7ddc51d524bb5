/**
 * The dashboard with a full journal: 100,000 entries, then /ui's first views loaded in Debian's
 * chromium (a fresh context each time: nothing cached), their bytes, a journal filter over
 * HTTP, and a burst of requests with and without the Requests view watching live. No peer has a
 * dashboard to set beside it, so each figure is set beside its goal.
 */
import { chromium, type Browser } from 'playwright-core';
import { start, type Localplane } from '../../src/localplane.ts';
import { goal, median, medianAndRange, milliseconds, percent, perSecond, type Row } from './report.ts';

const JOURNAL_ENTRIES = 100_000;
const FIRST_VIEW_GOAL_MS = 300;
const FILTER_GOAL_MS = 200;
const FIRST_VIEW_BYTES_GOAL = 150 * 1024;
const CHROMIUM = process.env.LOCALPLANE_CHROMIUM ?? '/usr/bin/chromium';

/** A user's mix: lists of destinations and deployments, and bodies the API refuses. */
async function fillJournal(lp: Localplane, apiKey: string): Promise<void> {
  const headers = { 'x-api-key': apiKey };
  for (let i = 0; i < JOURNAL_ENTRIES; i++) {
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
const BURST = 3000;
const BURST_CONNECTIONS = 10;
const LIVE_VIEW_GOAL = 0.8;

/** BURST requests over BURST_CONNECTIONS connections, one in flight on each; requests per second. */
async function burst(apiUrl: string, apiKey: string): Promise<number> {
  const headers = { 'x-api-key': apiKey };
  let sent = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: BURST_CONNECTIONS }, async () => {
      while (sent < BURST) {
        sent++;
        const response = await fetch(`${apiUrl}/api/v1/bulk-exports/destinations`, { headers });
        await response.arrayBuffer();
      }
    }),
  );
  return BURST / ((performance.now() - began) / 1000);
}

/**
 * The burst's rate with no viewer and with /ui/requests open in chromium (live, as a person
 * watches it: its stream read and its rows drawn), in turns, `runs` of each; the burst ends when
 * its last request has been answered, and the page is then waited on to show it.
 */
export async function measureLiveView(
  lp: Pick<Localplane, 'apiUrl'>,
  browser: Browser,
  apiKey: string,
  runs: number,
): Promise<Row[]> {
  const alone: number[] = [];
  const watched: number[] = [];
  await burst(lp.apiUrl, apiKey); // warm-up
  for (let run = 0; run < runs; run++) {
    alone.push(await burst(lp.apiUrl, apiKey));
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${lp.apiUrl}/ui/requests`, { waitUntil: 'load' });
      await page.waitForFunction(() => document.querySelector('#requests-live[sse-connect]') !== null);
      watched.push(await burst(lp.apiUrl, apiKey));
      const { requests } = (await (await fetch(`${lp.apiUrl}/_localplane/requests?order=desc&limit=1`)).json()) as {
        requests: { id: number }[];
      };
      await page.waitForSelector(`#request-${requests[0]!.id}`, { timeout: 60_000 });
    } finally {
      await context.close();
    }
  }
  const ratio = median(watched) / median(alone);
  const what = `${BURST.toLocaleString('en')}-request burst over ${BURST_CONNECTIONS} connections (${runs} runs)`;
  return [
    {
      what: `dashboard: ${what}, no viewer`,
      localplane: medianAndRange(alone, perSecond),
      peer: 'none: the row below is set beside it',
      peerFigure: '—',
      ratio: '—',
      goal: '—',
    },
    {
      what: `dashboard: ${what}, /ui/requests open live in chromium`,
      localplane: medianAndRange(watched, perSecond),
      peer: 'the same burst with no viewer',
      peerFigure: perSecond(median(alone)),
      ratio: percent(ratio),
      goal: goal(`≥ ${percent(LIVE_VIEW_GOAL)} of it`, ratio >= LIVE_VIEW_GOAL),
    },
  ];
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

export async function measureDashboard(options: { runs: number; log: (line: string) => void }): Promise<Row[]> {
  const lp = await start({ port: 0, objstorePort: 0, journalCapacity: JOURNAL_ENTRIES, log: () => {} });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
  });
  try {
    const { workspaces } = (await (await lp.request('/_localplane/fixtures')).json()) as {
      workspaces: { api_key: string }[];
    };
    await fillJournal(lp, workspaces[0]!.api_key);
    const { count } = (await (await lp.request('/_localplane/requests/count')).json()) as { count: number };
    options.log(`dashboard: ${count.toLocaleString('en')} entries in the journal`);
    const samples = Math.max(options.runs, 10);
    const views: Record<string, FirstView[]> = {};
    for (const path of ['/ui', '/ui/requests']) {
      await firstView(browser, `${lp.apiUrl}${path}`); // warm-up: the server's modules and assets loaded
      views[path] = [];
      for (let i = 0; i < samples; i++) views[path]!.push(await firstView(browser, `${lp.apiUrl}${path}`));
    }
    const filterRows: Row[] = [];
    for (const [what, query] of FILTERS) {
      const url = `${lp.apiUrl}/_localplane/requests?${query}`;
      const first = await timeFetch(url);
      const times: number[] = [];
      for (let i = 0; i < samples; i++) times.push(await timeFetch(url));
      filterRows.push(filterRow(`${what}; the first request ${milliseconds(first)}`, times, samples));
    }
    const rows: Row[] = [];
    for (const [path, runs] of Object.entries(views)) {
      const ms = runs.map((run) => run.ms);
      const bytes = median(runs.map((run) => run.bytes));
      rows.push({
        what:
          `dashboard: ${path} first view in chromium, fresh ` +
          `context, ${JOURNAL_ENTRIES.toLocaleString('en')}-entry journal (${samples} loads)`,
        localplane: medianAndRange(ms, milliseconds),
        peer: 'none in the same run: the goal',
        peerFigure: milliseconds(FIRST_VIEW_GOAL_MS),
        ratio: `${(median(ms) / FIRST_VIEW_GOAL_MS).toFixed(2)}×`,
        goal: goal(`≤ ${FIRST_VIEW_GOAL_MS} ms`, median(ms) <= FIRST_VIEW_GOAL_MS),
      });
      rows.push({
        what: `dashboard: ${path} first view, bytes transferred (HTML, CSS, JS)`,
        localplane: `${(bytes / 1024).toFixed(1)} KB`,
        peer: 'none in the same run: the goal',
        peerFigure: `${FIRST_VIEW_BYTES_GOAL / 1024} KB`,
        ratio: `${(bytes / FIRST_VIEW_BYTES_GOAL).toFixed(2)}×`,
        goal: goal(`≤ ${FIRST_VIEW_BYTES_GOAL / 1024} KB`, bytes <= FIRST_VIEW_BYTES_GOAL),
      });
    }
    rows.push(...filterRows);
    rows.push(...(await measureLiveView(lp, browser, workspaces[0]!.api_key, options.runs)));
    return rows;
  } finally {
    await browser.close();
    await lp.stop();
  }
}
