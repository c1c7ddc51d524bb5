/** Cold start: from the spawn of the compiled CLI to its first 200, against Prism's mock spawned the same way. */
import { firstOk, type PrismDocument, spawnLocalplane, spawnPrism } from './processes.ts';
import { goal, median, milliseconds, type Row, times } from './report.ts';

export const FIRST_REQUEST = '/v2/deployments?limit=20';
/** A workspace key of the shipped fixtures; Prism only checks that the header is there. */
export const API_KEY = 'lp_test_acme_plus_0001';
const GOAL_MS = 300;

async function localplaneColdStart(): Promise<number> {
  const server = await spawnLocalplane();
  try {
    return (await firstOk(`${server.apiUrl}${FIRST_REQUEST}`, { 'X-API-Key': API_KEY })) - server.spawnedAt;
  } finally {
    await server.stop();
  }
}

async function prismColdStart(document: string): Promise<number> {
  const prism = await spawnPrism(document);
  try {
    return (await firstOk(`${prism.apiUrl}${FIRST_REQUEST}`, { 'X-API-Key': API_KEY })) - prism.spawnedAt;
  } finally {
    await prism.stop();
  }
}

export async function measureColdStart(options: { runs: number; prism: PrismDocument; log: (line: string) => void }): Promise<Row[]> {
  // One of each first, not counted: the files they load are in the page cache for every counted run.
  await localplaneColdStart();
  await prismColdStart(options.prism.file);
  const localplane: number[] = [];
  const prism: number[] = [];
  for (let run = 1; run <= options.runs; run++) {
    localplane.push(await localplaneColdStart());
    prism.push(await prismColdStart(options.prism.file));
    options.log(`cold start ${run}/${options.runs}: localplane ${milliseconds(localplane.at(-1)!)}, prism ${milliseconds(prism.at(-1)!)}`);
  }
  return [
    {
      what: `cold start: spawn to the first 200 of GET ${FIRST_REQUEST}`,
      localplane: milliseconds(median(localplane)),
      peer: options.prism.peer,
      peerFigure: milliseconds(median(prism)),
      ratio: times(median(localplane) / median(prism)),
      goal: goal(`≤ ${GOAL_MS} ms`, median(localplane) <= GOAL_MS),
    },
  ];
}
