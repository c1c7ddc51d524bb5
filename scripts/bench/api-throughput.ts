/**
 * Two authenticated reads at N connections (one request in flight per connection): localplane
 * against Prism's mock on the same paths and against a bare Hono server answering the same bytes
 * (the ceiling). Each repetition measures every path on every server, in turn. Pinned, every
 * server runs on one CPU and the load generator on another (see load.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createExport, DEPLOYMENTS_PAGE, SEEDED_API_KEY, waitForExport } from './client.ts';
import { describeLoad, type Generator, type LoadSample, type Placement, runLoad } from './load.ts';
import {
  type CannedResponse,
  firstOk,
  type PrismDocument,
  spawnCeiling,
  spawnLocalplane,
  spawnPrism,
} from './processes.ts';
import { goal, median, medianAndRange, milliseconds, percent, perSecond, type Row, times } from './report.ts';

/** A seeded session of the shipped fixtures (1,500 runs over three days), exported once for the bulk-export read. */
const SEEDED_SESSION = {
  id: 'b473474a-d1dd-4781-b84d-264ef5770f98',
  start: '2026-10-01T00:00:00Z',
  end: '2026-10-04T00:00:00Z',
};
const HEADERS = { 'X-API-Key': SEEDED_API_KEY };
/** Not the answer's own: they describe the connection or the moment. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date']);
const GOALS = { overPrism: 15, ofCeiling: 0.5, p99Ms: 15 };

interface Settings {
  runs: number;
  seconds: number;
  connections: number;
  prism: PrismDocument;
  generator: Generator;
  /** Undefined: servers and load generator share every CPU. */
  placement: Placement | undefined;
  log: (line: string) => void;
}

async function canned(apiUrl: string, path: string): Promise<CannedResponse> {
  const response = await fetch(`${apiUrl}${path}`, { headers: HEADERS });
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!HOP_HEADERS.has(name)) headers[name] = value;
  });
  return { path: new URL(path, apiUrl).pathname, status: response.status, headers, body: await response.text() };
}

function rowsOf(
  label: string,
  servers: Record<'localplane' | 'prism' | 'ceiling', LoadSample[]>,
  settings: Settings,
  bodyBytes: number,
): Row[] {
  const figure = (samples: LoadSample[]) => ({
    rate: median(samples.map((sample) => sample.requestsPerSecond)),
    rates: medianAndRange(
      samples.map((sample) => sample.requestsPerSecond),
      perSecond,
    ),
    p50: median(samples.map((sample) => sample.p50)),
    p99: median(samples.map((sample) => sample.p99)),
  });
  const [localplane, prism, ceiling] = [figure(servers.localplane), figure(servers.prism), figure(servers.ceiling)];
  const latency = (of: typeof localplane) => `p50 ${milliseconds(of.p50)}, p99 ${milliseconds(of.p99)}`;
  const what =
    `GET ${label}, ${describeLoad(settings.generator, settings.connections, settings.placement)} ` +
    `(${(bodyBytes / 1024).toFixed(1)} KiB answer)`;
  const isDeployments = label === DEPLOYMENTS_PAGE;
  return [
    {
      what: `${what}: requests`,
      localplane: localplane.rates,
      peer: settings.prism.peer,
      peerFigure: prism.rates,
      ratio: times(localplane.rate / prism.rate),
      goal: isDeployments ? goal(`≥ ${GOALS.overPrism}×`, localplane.rate >= GOALS.overPrism * prism.rate) : '',
    },
    {
      what: `${what}: requests`,
      localplane: localplane.rates,
      peer: 'bare Hono on @hono/node-server, same bytes (ceiling)',
      peerFigure: ceiling.rates,
      ratio: percent(localplane.rate / ceiling.rate),
      goal: goal(`≥ ${percent(GOALS.ofCeiling)}`, localplane.rate >= GOALS.ofCeiling * ceiling.rate),
    },
    {
      what: `${what}: latency`,
      localplane: latency(localplane),
      peer: 'prism (p99 ratio)',
      peerFigure: latency(prism),
      ratio: times(localplane.p99 / prism.p99),
      goal: '',
    },
    {
      what: `${what}: latency`,
      localplane: latency(localplane),
      peer: 'ceiling (p99 ratio)',
      peerFigure: latency(ceiling),
      ratio: times(localplane.p99 / ceiling.p99),
      goal: goal(`p99 ≤ ${GOALS.p99Ms} ms`, localplane.p99 <= GOALS.p99Ms),
    },
  ];
}

export async function measureApiThroughput(settings: Settings): Promise<Row[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'localplane-bench-api-'));
  const stops: (() => Promise<void>)[] = [];
  try {
    const serverCpu = settings.placement?.serverCpu;
    const localplane = await spawnLocalplane({ cpu: serverCpu });
    stops.push(localplane.stop);
    const exportId = await createExport({
      apiUrl: localplane.apiUrl,
      apiKey: SEEDED_API_KEY,
      sessionId: SEEDED_SESSION.id,
      start: SEEDED_SESSION.start,
      end: SEEDED_SESSION.end,
      compression: 'snappy',
    });
    const { status } = await waitForExport(localplane.apiUrl, SEEDED_API_KEY, exportId, 50);
    if (status !== 'Completed') throw new Error(`the seeded export ended ${status}`);
    const reads = [
      { label: DEPLOYMENTS_PAGE, path: DEPLOYMENTS_PAGE },
      { label: '/api/v1/bulk-exports/{id}', path: `/api/v1/bulk-exports/${exportId}` },
    ];
    const paths = reads.map((read) => read.path);

    const answers = await Promise.all(paths.map((path) => canned(localplane.apiUrl, path)));
    const responsesFile = join(scratch, 'responses.json');
    writeFileSync(responsesFile, JSON.stringify(answers));
    const ceiling = await spawnCeiling(responsesFile, serverCpu);
    stops.push(ceiling.stop);
    const prism = await spawnPrism(settings.prism.file, serverCpu);
    stops.push(prism.stop);
    await firstOk(`${prism.apiUrl}${DEPLOYMENTS_PAGE}`, HEADERS);

    const servers = { localplane: localplane.apiUrl, prism: prism.apiUrl, ceiling: ceiling.apiUrl };
    const load = (url: string, seconds: number) =>
      runLoad(
        settings.generator,
        { url, connections: settings.connections, seconds, headers: HEADERS },
        settings.placement?.loadCpu,
      );
    const samples = paths.map(() => ({
      localplane: [] as LoadSample[],
      prism: [] as LoadSample[],
      ceiling: [] as LoadSample[],
    }));
    for (const path of paths) for (const url of Object.values(servers)) await load(`${url}${path}`, 1); // warm-up
    for (let run = 1; run <= settings.runs; run++) {
      for (const [index, path] of paths.entries()) {
        for (const [name, url] of Object.entries(servers) as [keyof typeof servers, string][]) {
          const sample = await load(`${url}${path}`, settings.seconds);
          samples[index]![name].push(sample);
          settings.log(
            `api ${run}/${settings.runs} ` +
              `GET ${reads[index]!.label} ${name}: ${perSecond(sample.requestsPerSecond)}, ` +
              `p50 ${milliseconds(sample.p50)}, p99 ${milliseconds(sample.p99)}`,
          );
        }
      }
    }
    return reads.flatMap((read, index) =>
      rowsOf(read.label, samples[index]!, settings, Buffer.byteLength(answers[index]!.body)),
    );
  } finally {
    for (const stop of stops.reverse()) await stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}
