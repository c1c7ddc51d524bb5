/**
 * Stress of the hosted CLI's remote-build deploy flow on a running emulator clock (issue 42: a revision
 * step left waiting past its due time): rounds of 24 concurrent deployments in the two workspaces that may
 * build from source, each the CLI's calls in its order with seeded random think time between them, its
 * revision polled every 20-50 ms of real time until DEPLOYED while the scheduler's own timers move it.
 * Fault rules slow down, refuse (503) or drop (a reset or an empty reply) half the flows' tarball PUTs; a flow
 * whose PUT failed uploads again as the CLI's user would, since the CLI itself does not retry. A full reset
 * or one workspace's reset comes between rounds, and in one round a workspace is reset while its flows are
 * in flight: those end with a 404 and nothing else, the other workspace's reach DEPLOYED, and fresh flows
 * of the reset workspace do too. At the end the scheduler's watchdog has had nothing to start late or to
 * free. `npm test` draws from a fixed seed, printed on every run and in every failure;
 * LOCALPLANE_STRESS_SEED=<seed> draws from another, or replays one: its delays, faults and reset point
 * (not the order in which the event loop interleaves the flows).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { SOURCE_TARBALL_BUCKET } from '../../src/deployments/source-uploads.ts';
import { createRandom, randomInt, seedFrom, type Random } from '../../src/shared/prng.ts';
import {
  cliCreateBody,
  cliRemoteBuildPatch,
  projectTarball,
  putTarball,
  TERMINAL_STATUSES,
} from '../support/deployments.ts';
import { useLocalplane, workspaceByTier, type ApiResponse, type FixtureWorkspace } from '../support/instance.ts';

const SEED_ENV = process.env.LOCALPLANE_STRESS_SEED;
const SEED = SEED_ENV === undefined ? 20_261_129 : Number(SEED_ENV);
if (!Number.isSafeInteger(SEED)) throw new Error(`LOCALPLANE_STRESS_SEED must be a whole number, got "${SEED_ENV}"`);

/** Six steps of 50 ms: a revision is DEPLOYED 0.3 s of real time after its PATCH. */
const STEP_SECONDS = 0.05;
const FLOWS_PER_ROUND = 24;
const POLL_DEADLINE_MS = 20_000;
const STEPS = ['CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY', 'DEPLOYING', 'DEPLOYED'];
const SECRETS = [{ name: 'OPENAI_API_KEY', value: 'lp-stress-secret-value' }];

// A running clock: nothing advances it, the scheduler's timers start every step.
const ctx = useLocalplane({});
const admin = (method: string, path: string, body?: unknown) =>
  ctx.admin.request(method, path, body === undefined ? {} : { body });
/** The two fixture workspaces that are not self-hosted, as deploy-flow's acme and initech. */
const workspaces = () => [workspaceByTier(ctx.fixtures, 'plus'), workspaceByTier(ctx.fixtures, 'developer')];

interface Fault {
  kind: 'slow' | 'refused' | 'dropped' | 'empty reply';
  action: Record<string, unknown>;
  /** How many PUTs the rule acts on, and how many of those fail. */
  count: number;
  failures: number;
}

/** Half the flows meet a fault rule on their deployment's folder of the sources bucket. */
function drawFault(random: Random): Fault | null {
  const draw = random();
  if (draw < 0.2) {
    return {
      kind: 'slow',
      action: { latency: { distribution: 'uniform', min_ms: 100, max_ms: 400 } },
      count: 1,
      failures: 0,
    };
  }
  if (draw < 0.35) {
    const failures = randomInt(random, 1, 2);
    return {
      kind: 'refused',
      action: { status: 503, detail: 'Please reduce your request rate.' },
      count: failures,
      failures,
    };
  }
  if (draw < 0.45) return { kind: 'dropped', action: { drop_connection: true }, count: 1, failures: 1 };
  if (draw < 0.5) return { kind: 'empty reply', action: { empty_reply: true }, count: 1, failures: 1 };
  return null;
}

interface Flow {
  name: string;
  workspace: FixtureWorkspace;
  random: Random;
  fault: Fault | null;
  /** When it starts after the round does, in ms. */
  startMs: number;
}

interface Deployed {
  flow: Flow;
  deploymentId: string;
  ruleId: string | null;
  failedPuts: number;
  /** The most any step of its revision started past its due time, in ms: printed, never asserted. */
  lateMs: number;
}

/** A 404 on a flow's call: its workspace was reset under it, and the flow ends there. */
class Gone extends Error {
  readonly at = performance.now();
  constructor(
    readonly flow: Flow,
    readonly step: string,
  ) {
    super(`${flow.name}: ${step} answered 404`);
  }
}

const describeFlow = (flow: Flow) =>
  `seed ${SEED}: ${flow.name} (${flow.workspace.tier}, fault ${flow.fault?.kind ?? 'none'})`;

/**
 * The body of a response with the status the flow expects; a 404 ends the flow (Gone); anything else fails the test.
 */
function answer(flow: Flow, step: string, response: ApiResponse, status: number) {
  if (response.status === status) return response.body;
  if (response.status === 404) throw new Gone(flow, step);
  throw new Error(`${describeFlow(flow)}: ${step} answered ${response.status}: ${response.text}`);
}

/** What a stall looks like from outside: the clock, the revision's steps so far, and every task waiting. */
async function stallReport(flow: Flow, deploymentId: string, revisionId: string, status: string): Promise<string> {
  const [clock, history, tasks] = await Promise.all([
    admin('GET', '/clock'),
    admin('GET', `/deployments/${deploymentId}/revisions/${revisionId}/history`),
    admin('GET', '/tasks'),
  ]);
  return [
    `${describeFlow(flow)}: revision ${revisionId} still ${status} after ${POLL_DEADLINE_MS / 1000} s of polling`,
    `GET /_localplane/clock: ${clock.text}`,
    `its history: ${history.text}`,
    `GET /_localplane/tasks: ${tasks.text}`,
  ].join('\n');
}

let tarball: Buffer;

/** The CLI's `deploy --remote --name <name>` of a new deployment, then its wait for the revision. */
async function deploy(flow: Flow, onCreated: (flow: Flow) => void): Promise<Deployed> {
  const api = ctx.api.as(flow.workspace);
  const think = () => sleep(randomInt(flow.random, 0, 30));
  await sleep(flow.startMs);

  const found = answer(flow, 'lookup', await api.get(`/v2/deployments?name_contains=${flow.name}`), 200);
  expect(
    found.resources.filter((resource: { name: string }) => resource.name === flow.name),
    describeFlow(flow),
  ).toEqual([]);
  const created = answer(
    flow,
    'create',
    await api.post('/v2/deployments', cliCreateBody(flow.name, 'internal_source', SECRETS)),
    201,
  );
  const deploymentId: string = created.id;
  onCreated(flow);
  let ruleId: string | null = null;
  if (flow.fault) {
    const match = {
      source: 'objstore',
      method: 'PUT',
      path: `/${SOURCE_TARBALL_BUCKET}/${flow.workspace.id}/${deploymentId}/*`,
    };
    const rule = await admin('POST', '/fault-rules', { match, action: flow.fault.action, count: flow.fault.count });
    expect(rule.status, rule.text).toBe(201);
    ruleId = rule.body.id;
  }

  // The CLI does not retry a failed upload (_upload_to_gcs raises): its user runs the command again, which
  // finds the deployment (a GET of it), asks for a new upload URL and PUTs again.
  let objectPath: string | undefined;
  let failedPuts = 0;
  while (objectPath === undefined) {
    if (failedPuts > 0) answer(flow, 'get deployment', await api.get(`/v2/deployments/${deploymentId}`), 200);
    await think();
    const upload = answer(flow, 'upload-url', await api.post(`/v2/deployments/${deploymentId}/upload-url`), 200);
    await think();
    const put = await putTarball(upload.upload_url, tarball).then(
      async (response) => ({ status: response.status, text: await response.text() }),
      (error: Error) => ({ status: 0, text: `${error.message}: ${(error.cause as Error | undefined)?.message}` }),
    );
    if (put.status === 200) objectPath = upload.object_path;
    else if (++failedPuts > (flow.fault?.failures ?? 0)) {
      throw new Error(`${describeFlow(flow)}: PUT number ${failedPuts} failed: ${put.status} ${put.text}`);
    }
  }

  await think();
  const patch = cliRemoteBuildPatch(objectPath, SECRETS);
  const patched = answer(flow, 'PATCH', await api.patch(`/v2/deployments/${deploymentId}`, patch), 200);
  await think();
  const latest = answer(flow, 'revisions', await api.get(`/v2/deployments/${deploymentId}/revisions?limit=1`), 200);
  const revisionId: string = latest.resources[0].id;
  expect(revisionId, describeFlow(flow)).toBe(patched.latest_revision_id);

  const deadline = performance.now() + POLL_DEADLINE_MS;
  let status: string;
  for (;;) {
    status = answer(flow, 'poll', await api.get(`/v2/deployments/${deploymentId}/revisions/${revisionId}`), 200).status;
    if (TERMINAL_STATUSES.includes(status)) break;
    if (performance.now() > deadline) throw new Error(await stallReport(flow, deploymentId, revisionId, status));
    await sleep(randomInt(flow.random, 20, 50));
  }
  expect(status, describeFlow(flow)).toBe('DEPLOYED');
  const deployment = answer(flow, 'get deployment', await api.get(`/v2/deployments/${deploymentId}`), 200);
  const ready = { status: 'READY', active_revision_id: revisionId, latest_revision_id: revisionId };
  expect(deployment, describeFlow(flow)).toMatchObject(ready);

  const historyPath = `/deployments/${deploymentId}/revisions/${revisionId}/history`;
  const history: { status: string; at: string }[] = answer(flow, 'history', await admin('GET', historyPath), 200);
  expect(
    history.map((step) => step.status),
    describeFlow(flow),
  ).toEqual(STEPS);
  // The clock runs with wall time, so a step's gap past STEP_SECONDS is how late its task started.
  const gaps = history.slice(1).map((step, index) => Date.parse(step.at) - Date.parse(history[index]!.at));
  return { flow, deploymentId, ruleId, failedPuts, lateMs: Math.max(...gaps) - STEP_SECONDS * 1000 };
}

interface RoundResult {
  deployed: Deployed[];
  gone: Gone[];
}

/** Runs the flows side by side; every failure other than a Gone is reported together, with the seed. */
async function runFlows(flows: Flow[], onCreated: (flow: Flow) => void = () => {}): Promise<RoundResult> {
  const settled = await Promise.allSettled(flows.map((flow) => deploy(flow, onCreated)));
  const result: RoundResult = { deployed: [], gone: [] };
  const failures: string[] = [];
  for (const outcome of settled) {
    if (outcome.status === 'fulfilled') result.deployed.push(outcome.value);
    else if (outcome.reason instanceof Gone) result.gone.push(outcome.reason);
    else failures.push(outcome.reason instanceof Error ? outcome.reason.message : String(outcome.reason));
  }
  if (failures.length > 0)
    throw new Error(`seed ${SEED}: ${failures.length} flow(s) failed:\n${failures.join('\n---\n')}`);
  return result;
}

/** A round in which no workspace was reset: every flow DEPLOYED, its faults and tasks as they should be. */
async function allDeployed(result: RoundResult): Promise<Deployed[]> {
  expect(result.gone.map((gone) => `seed ${SEED}: ${gone.message}`)).toEqual([]);
  await checkRound(result.deployed);
  return result.deployed;
}

/** Flows spread over `among` in turn, each with its own generator: its delays and fault owe nothing to the others'. */
function makeFlows(
  round: number,
  count: number,
  { among = workspaces(), label = '', startWithinMs = 300 } = {},
): Flow[] {
  return Array.from({ length: count }, (_, index) => {
    const workspace = among[index % among.length]!;
    const name = `stress-r${round}-${workspace.tier}${label}-${index}`;
    const random = createRandom(seedFrom(SEED, name));
    return { name, workspace, random, fault: drawFault(random), startMs: randomInt(random, 0, startWithinMs) };
  });
}

/** Every fault rule of a deployed flow acted on each PUT it was meant for; its deployment has no step left. */
async function checkRound(deployed: Deployed[]): Promise<void> {
  const listed: { id: string; fired: number }[] = (await admin('GET', '/fault-rules')).body.rules;
  const rules = new Map(listed.map((rule) => [rule.id, rule.fired]));
  for (const { flow, ruleId, failedPuts } of deployed) {
    expect(failedPuts, describeFlow(flow)).toBe(flow.fault?.failures ?? 0);
    if (ruleId) expect(rules.get(ruleId), describeFlow(flow)).toBe(flow.fault!.count);
  }
  const ours = new Set(deployed.map((outcome) => outcome.deploymentId));
  const tasks = (await admin('GET', '/tasks')).body as { deployment_id?: string; label: string }[];
  expect(tasks.filter((task) => ours.has(task.deployment_id ?? '')).map((task) => task.label)).toEqual([]);
}

async function stressNames(workspace: FixtureWorkspace): Promise<string[]> {
  const listed = await ctx.api.as(workspace).get('/v2/deployments?name_contains=stress-&limit=100');
  return listed.body.resources.map((resource: { name: string }) => resource.name);
}

async function configure(): Promise<void> {
  const patched = await admin('PATCH', '/config', { revision_step_seconds: STEP_SECONDS });
  expect(patched.status, patched.text).toBe(200);
}

describe('the hosted CLI deploy flow under stress', () => {
  it(
    'rounds of concurrent deployments, slow and failed uploads, resets between rounds and one mid-flight: all ' +
      'DEPLOYED',
    async () => {
      console.log(`deployments-stress: seed ${SEED} (LOCALPLANE_STRESS_SEED=${SEED} replays it)`);
      tarball = projectTarball();
      const [acme, initech] = workspaces() as [FixtureWorkspace, FixtureWorkspace];
      const all: Deployed[] = [];
      await configure();

      // Round 1, then a full reset: the clock back to wall time and running, the limits and the fault rules back to
      // none.
      all.push(...(await allDeployed(await runFlows(makeFlows(1, FLOWS_PER_ROUND)))));
      expect((await admin('POST', '/reset')).status).toBe(200);
      expect((await admin('GET', '/clock')).body.frozen).toBe(false);
      expect((await admin('GET', '/fault-rules')).body.rules).toEqual([]);
      expect(await stressNames(acme)).toEqual([]);
      await configure();

      // Round 2, then acme's reset alone: initech's deployments stay.
      const second = await allDeployed(await runFlows(makeFlows(2, FLOWS_PER_ROUND)));
      all.push(...second);
      expect((await admin('POST', '/reset', { workspace_id: acme.id })).status).toBe(200);
      expect(await stressNames(acme)).toEqual([]);
      const initechNames = second.filter(({ flow }) => flow.workspace === initech).map(({ flow }) => flow.name);
      expect((await stressNames(initech)).sort()).toEqual(initechNames.sort());

      // Round 3: initech is reset once 4 to 8 of its 12 flows have created their deployment (whose first revision
      // is then on its way), some further on; the round's starts are spread wider, so that some start after it.
      const resetAfter = randomInt(createRandom(seedFrom(SEED, 'reset point')), 4, 8);
      let createdInitech = 0;
      let resetSentAt = Infinity;
      let requestReset!: () => void;
      const reset = new Promise<void>((resolve) => (requestReset = resolve))
        .then(async () => {
          resetSentAt = performance.now();
          const response = await admin('POST', '/reset', { workspace_id: initech.id });
          expect(response.status, response.text).toBe(200);
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      const onCreated = (flow: Flow) => {
        if (flow.workspace === initech && ++createdInitech === resetAfter) requestReset();
      };
      // Should too few creates succeed (a failed round), the reset still happens, so that nothing waits on it for ever.
      const third = await runFlows(makeFlows(3, FLOWS_PER_ROUND, { startWithinMs: 1000 }), onCreated).finally(
        requestReset,
      );
      const resetError = await reset;
      if (resetError) throw resetError;
      expect(third.deployed.filter(({ flow }) => flow.workspace === acme)).toHaveLength(FLOWS_PER_ROUND / 2);
      expect(third.gone.length, `seed ${SEED}: the reset ended no flow in flight`).toBeGreaterThan(0);
      for (const gone of third.gone) {
        expect(gone.flow.workspace, `seed ${SEED}: ${gone.message}`).toBe(initech);
        expect(gone.at, `seed ${SEED}: ${gone.message} before the reset was sent`).toBeGreaterThan(resetSentAt);
      }
      await checkRound(third.deployed);
      all.push(...third.deployed);
      // As many fresh deployments in the reset workspace as the reset ended: all DEPLOYED.
      all.push(
        ...(await allDeployed(await runFlows(makeFlows(3, third.gone.length, { among: [initech], label: '-fresh' })))),
      );

      // A full reset that keeps the (running) clock, then round 4.
      const before = Date.parse((await admin('GET', '/clock')).body.now);
      expect((await admin('POST', '/reset', { keep_clock: true })).status).toBe(200);
      const kept = (await admin('GET', '/clock')).body;
      expect(kept.frozen).toBe(false);
      expect(Date.parse(kept.now)).toBeGreaterThanOrEqual(before);
      await configure();
      all.push(...(await allDeployed(await runFlows(makeFlows(4, FLOWS_PER_ROUND)))));

      const health = await admin('GET', '/health');
      expect(health.body.watchdog, `seed ${SEED}: the watchdog had work: ${health.text}`).toEqual({
        late_starts: 0,
        overruns: 0,
      });
      expect(ctx.logs.filter((line) => /task ".*" failed|watchdog/.test(line))).toEqual([]);

      const tally = (keys: string[]) =>
        JSON.stringify(Object.fromEntries(keys.map((key) => [key, keys.filter((k) => k === key).length])));
      const latest = all.reduce((worst, outcome) => (outcome.lateMs > worst.lateMs ? outcome : worst));
      console.log(
        `deployments-stress: seed ${SEED}: ${all.length} deployments DEPLOYED; the reset ended ${third.gone.length} ` +
          `flows with a 404 ` +
          (`(at ${tally(third.gone.map((gone) => gone.step))}), ${third.deployed.length - FLOWS_PER_ROUND / 2} of ` +
            `initech's DEPLOYED; `) +
          `faults ${tally(all.map(({ flow }) => flow.fault?.kind ?? 'none'))}; ` +
          `latest step ${latest.lateMs} ms past due (${latest.flow.name})`,
      );
    },
    120_000,
  );
});
