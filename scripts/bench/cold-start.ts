/** Cold start: from the spawn of the compiled CLI to its first 200, against Prism's mock spawned the same way. */
import { DEPLOYMENTS_PAGE, SEEDED_API_KEY } from './client.ts';
import { firstOk, type PrismDocument, spawnLocalplane, spawnPrism } from './processes.ts';
import { goal, median, medianAndRange, milliseconds, type Row, times } from './report.ts';

const GOALS = { ms: 150, ofPrism: 0.15 };

async function localplaneColdStart(): Promise<number> {
  const server = await spawnLocalplane();
  try {
    return (await firstOk(`${server.apiUrl}${DEPLOYMENTS_PAGE}`, { 'X-API-Key': SEEDED_API_KEY })) - server.spawnedAt;
  } finally {
    await server.stop();
  }
}

async function prismColdStart(document: string): Promise<number> {
  const prism = await spawnPrism(document);
  try {
    return (await firstOk(`${prism.apiUrl}${DEPLOYMENTS_PAGE}`, { 'X-API-Key': SEEDED_API_KEY })) - prism.spawnedAt;
  } finally {
    await prism.stop();
  }
}

export async function measureColdStart(options: {
  runs: number;
  prism: PrismDocument;
  log: (line: string) => void;
}): Promise<Row[]> {
  // One of each first, not counted: the files they load are in the page cache for every counted run.
  await localplaneColdStart();
  await prismColdStart(options.prism.file);
  const localplane: number[] = [];
  const prism: number[] = [];
  for (let run = 1; run <= options.runs; run++) {
    localplane.push(await localplaneColdStart());
    prism.push(await prismColdStart(options.prism.file));
    options.log(
      `cold start ${run}/${options.runs}: localplane ${milliseconds(localplane.at(-1)!)}, ` +
        `prism ${milliseconds(prism.at(-1)!)}`,
    );
  }
  return [
    {
      what: `cold start: spawn to the first 200 of GET ${DEPLOYMENTS_PAGE}`,
      localplane: medianAndRange(localplane, milliseconds),
      peer: options.prism.peer,
      peerFigure: medianAndRange(prism, milliseconds),
      ratio: times(median(localplane) / median(prism)),
      goal: goal(
        `≤ ${GOALS.ms} ms and ≤ ${GOALS.ofPrism}× prism`,
        median(localplane) <= GOALS.ms && median(localplane) <= GOALS.ofPrism * median(prism),
      ),
    },
  ];
}
