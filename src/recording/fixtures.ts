/**
 * `localplane fixtures from-recording`: a fixtures directory holding what a recording's answers
 * show (deployments with their revisions, OAuth providers, listeners, codehost repositories,
 * destinations and exports), in one workspace with an API key of its own, so that
 * `localplane start --fixtures <dir>` starts with the user's own shapes of data.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { z } from 'zod';
import { isEmbeddedEndpoint } from '../destinations/endpoints.ts';
import { destinationFixture, exportFixture } from '../bulk-exports/fixture-file.ts';
import {
  codehostIntegrationFixture,
  listedDeploymentFixture,
  listenerFixture,
  oauthProviderFixture,
} from '../deployments/fixture-file.ts';
import { DEFAULT_FIXTURES_DIR, FIXTURE_FILES, loadFixtures, type Fixtures } from '../fixtures/files.ts';
import { isCreatableBucketName } from '../objstore/bucket-directory.ts';
import type { ObjstorePermission } from '../objstore/types.ts';
import { MASKED_SECRET_VALUE } from '../shared/errors.ts';
import { uuidFrom } from '../shared/ids.ts';
import { MAX_JSON_DEPTH } from '../shared/json-text.ts';
import { jsonDepth, jsonText } from '../shared/json-walk.ts';
import { createRandom, seedFrom } from '../shared/prng.ts';
import { formatTimestamp, MICROS_PER_DAY, parseTimestamp, startOfUtcDay } from '../shared/time.ts';
import { recordedState, type Answered, type RecordedState } from './fixtures-answers.ts';
import { readRecording, RecordingFileError } from './har.ts';

/** The report's copy in the written directory. */
export const REPORT_FILE = 'from-recording.txt';
const NEW_WORKSPACE_NAME = 'Recorded workspace';
/** The permissions a destination's key pair needs for every step of an export. */
const EXPORT_PERMISSIONS: readonly ObjstorePermission[] = ['create', 'get', 'delete', 'multipart'];
/** Runs made up per day for a tracing project the recording only names (an export's session_id). */
const RUNS_PER_DAY = 24;
const MAX_MADE_UP_DAYS = 31;

export interface FromRecordingOptions {
  /** A HAR 1.2 file. */
  recording: string;
  /** The directory to write: new, or empty. */
  out: string;
  /** Leave out the shipped fixture workspaces, which are otherwise kept beside the recorded one. */
  recordedOnly?: boolean;
}

/** A recorded resource the fixtures do not hold, and why. */
export interface NotPlaced {
  resource: string;
  id: string;
  why: string;
}

export interface FromRecordingReport {
  directory: string;
  /** The workspace holding the recorded resources, and the API key to call it with. */
  workspace: { id: string; name: string; apiKey: string };
  /** How many of each were placed, by kind (`deployments`, `revisions`, ...). */
  placed: Record<string, number>;
  notPlaced: NotPlaced[];
  /** What was made up, changed or left out, in words. */
  notes: string[];
}

/** A recording that cannot be read, or an --out that cannot be written: the user's to fix. */
export class FromRecordingError extends Error {
  override name = 'FromRecordingError';
}

type Converted<T> = { value: T } | { why: string };
type Answer = Record<string, unknown>;

/** A recorded time as the fixtures write it (UTC, microseconds); anything else as it is, for the schema to refuse. */
function utc(value: unknown): unknown {
  const micros = typeof value === 'string' ? parseTimestamp(value) : null;
  return micros === null ? value : formatTimestamp(micros);
}

/** A converted resource checked by the schema the loader uses: what it refuses is not placed, in its words. */
function checked<S extends z.ZodType>(schema: S, value: unknown): Converted<z.output<S>> {
  const result = schema.safeParse(value);
  if (result.success) return { value: result.data };
  const issue = result.error.issues[0]!;
  return { why: `${issue.path.join('.') || 'the answer'}: ${issue.message}` };
}

const field = <T>(answer: Answer, name: string, guard: (value: unknown) => value is T): T | undefined =>
  guard(answer[name]) ? answer[name] : undefined;
const isString = (value: unknown): value is string => typeof value === 'string';
const isObject = (value: unknown): value is Answer =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Collects what is placed, what is not and why, and the notes of the report. */
class Placement {
  readonly placed: Record<string, number> = {};
  readonly notPlaced: NotPlaced[] = [];
  readonly notes: string[] = [];

  constructor(private readonly workspaceId: string) {}

  /** The converted resource, or undefined when it is of another workspace or the conversion refused it. */
  place<T>(resource: string, id: string, recorded: Answered, convert: () => Converted<T>): T | undefined {
    if (recorded.tenantId !== undefined && recorded.tenantId !== this.workspaceId)
      return this.refuse(resource, id, `of workspace ${recorded.tenantId}`);
    const converted = convert();
    if ('why' in converted) return this.refuse(resource, id, converted.why);
    // Nothing the API would refuse in a request is held: the instance answers with JSON.stringify,
    // which runs out of stack some 4,000 levels down.
    const depth = jsonDepth(converted.value);
    if (depth > MAX_JSON_DEPTH) {
      return this.refuse(
        resource,
        id,
        `nested ${depth} levels deep, more than the ${MAX_JSON_DEPTH} levels localplane's API takes`,
      );
    }
    this.count(`${resource}s`);
    return converted.value;
  }

  refuse(resource: string, id: string, why: string): undefined {
    this.notPlaced.push({ resource, id, why });
    return undefined;
  }

  count(kind: string, by = 1): void {
    this.placed[kind] = (this.placed[kind] ?? 0) + by;
  }
}

function refuseUsedOut(out: string): void {
  if (!existsSync(out)) return;
  if (!statSync(out).isDirectory()) throw new FromRecordingError(`--out ${out} is not a directory`);
  if (readdirSync(out).length > 0)
    throw new FromRecordingError(`--out ${out} is not empty: give a new or empty directory`);
}

function readLog(path: string) {
  try {
    return readRecording(path);
  } catch (error) {
    throw error instanceof RecordingFileError ? new FromRecordingError(error.message) : error;
  }
}

/** Writes the fixtures directory of a recording and its report file; returns the report. */
export function fixturesFromRecording(options: FromRecordingOptions): FromRecordingReport {
  const out = resolve(options.out);
  refuseUsedOut(out);
  const log = readLog(options.recording);
  // What is made up (a workspace id, the API key) comes from the recording: the same recording gives the same fixtures.
  const digest = createHash('sha256').update(jsonText(log)!).digest('hex');
  const shipped = loadFixtures(DEFAULT_FIXTURES_DIR);
  const { files, report } = recordedFixtures(recordedState(log), shipped, { ...options, out, digest });
  mkdirSync(out, { recursive: true });
  for (const [name, value] of Object.entries(files))
    writeFileSync(join(out, name), `${JSON.stringify(value, null, 2)}\n`);
  writeFileSync(join(out, REPORT_FILE), formatFromRecordingReport(report));
  // What was written must start: a failure here is a bug of this module, not of the recording.
  loadFixtures(out);
  return report;
}

function recordedFixtures(
  state: RecordedState,
  shipped: Fixtures,
  options: FromRecordingOptions & { out: string; digest: string },
) {
  const madeUpId = (what: string) => uuidFrom(createRandom(seedFrom(options.digest, what)));
  const workspaceId = state.tenantIds[0] ?? madeUpId('workspace');
  const placement = new Placement(workspaceId);
  if (state.tenantIds.length > 1)
    placement.notes.push(
      `The recording names other workspaces (${state.tenantIds.slice(1).join(', ')}): only ${workspaceId}'s ` +
        `resources are placed.`,
    );
  const shippedWorkspace = shipped.workspaces.workspaces.find((workspace) => workspace.id === workspaceId);
  const shippedFamily = shipped.deployments.workspaces.find((workspace) => workspace.workspace_id === workspaceId);

  const listeners = [...state.listeners].flatMap(
    ([id, recorded]) => placement.place('listener', id, recorded, () => listenerOf(recorded.answer)) ?? [],
  );
  const selfHosted =
    listeners.length > 0 ||
    [...state.deployments.values()].some(({ answer }) => answer.source === 'external_container') ||
    (shippedFamily?.self_hosted ?? false);
  const oauthProviders = [...state.oauthProviders].flatMap(
    ([providerId, recorded]) =>
      placement.place('OAuth provider', providerId, recorded, () =>
        checked(oauthProviderFixture, withUtcTimes(recorded.answer)),
      ) ?? [],
  );
  const organizationId =
    [...state.oauthProviders.values()].map(({ answer }) => answer.organization_id).find(isString) ??
    shippedFamily?.organization_id ??
    madeUpId('organization');
  const codehostIntegrations = integrationsOf(state, placement);
  const listedDeployments = deploymentsOf(state, placement, selfHosted);

  const buckets = [...shipped.objstore.buckets];
  const objstoreKey = shipped.objstore.keys.find((key) =>
    EXPORT_PERMISSIONS.every((permission) => key.permissions.includes(permission)),
  )?.access_key_id;
  const destinations = destinationsOf(state, placement, { buckets, objstoreKey });
  const sessions = [...(shippedWorkspace?.sessions ?? [])];
  const exports = exportsOf(state, placement, new Set(destinations.map((destination) => destination.id)));
  addExportedProjects(exports, sessions, placement);
  noteLeftOut(state, placement, { objstoreKey, listedDeployments, exports });

  const apiKey = `lp_recorded_${options.digest.slice(0, 24)}`;
  const name = shippedWorkspace?.name ?? NEW_WORKSPACE_NAME;
  if (shippedWorkspace)
    placement.notes.push(
      `Workspace ${workspaceId} is the shipped fixtures' ${name}: it keeps its tier and tracing projects, its ` +
        `deployment family is the recorded one, and its API key is new.`,
    );
  const keptIds = new Set(
    options.recordedOnly
      ? []
      : shipped.workspaces.workspaces.map((workspace) => workspace.id).filter((id) => id !== workspaceId),
  );
  const files = {
    [FIXTURE_FILES.workspaces]: {
      workspaces: [
        ...shipped.workspaces.workspaces.filter((workspace) => keptIds.has(workspace.id)),
        { id: workspaceId, name, tier: shippedWorkspace?.tier ?? 'enterprise', api_key: apiKey, sessions },
      ],
      unknown_api_key: shipped.workspaces.unknown_api_key,
    },
    [FIXTURE_FILES.objstore]: { ...shipped.objstore, buckets },
    [FIXTURE_FILES.deployments]: {
      workspaces: [
        ...shipped.deployments.workspaces.filter((workspace) => keptIds.has(workspace.workspace_id)),
        {
          workspace_id: workspaceId,
          organization_id: organizationId,
          self_hosted: selfHosted,
          oauth_providers: oauthProviders,
          codehost_integrations: codehostIntegrations,
          listeners,
          listed_deployments: listedDeployments,
        },
      ],
    },
    [FIXTURE_FILES.bulkExports]: { workspaces: [{ workspace_id: workspaceId, destinations, exports }] },
  };
  const report: FromRecordingReport = {
    directory: options.out,
    workspace: { id: workspaceId, name, apiKey },
    placed: placement.placed,
    notPlaced: placement.notPlaced,
    notes: placement.notes,
  };
  return { files, report };
}

const withUtcTimes = (answer: Answer) => ({
  ...answer,
  created_at: utc(answer.created_at),
  updated_at: utc(answer.updated_at),
});

function listenerOf(answer: Answer) {
  if (answer.compute_type !== 'k8s')
    return { why: `compute_type ${JSON.stringify(answer.compute_type)}: the fixtures hold k8s listeners only` };
  const computeConfig = isObject(answer.compute_config) ? answer.compute_config : {};
  return checked(listenerFixture, { ...withUtcTimes(answer), k8s_namespaces: computeConfig.k8s_namespaces });
}

/**
 * Integrations as /install answered them, with the repositories their listings answered; one only listed gets a made-up
 * installation.
 */
function integrationsOf(state: RecordedState, placement: Placement) {
  const ids = [...new Set([...state.codehostIntegrations.keys(), ...state.codehostRepos.keys()])];
  const madeUp: string[] = [];
  const integrations = ids.flatMap((id) => {
    const repos = (state.codehostRepos.get(id) ?? []).map(({ answer }) => answer);
    const listed = state.codehostIntegrations.get(id);
    const recorded = listed ?? state.codehostRepos.get(id)![0] ?? { answer: {}, tenantId: undefined };
    if (!listed) madeUp.push(id);
    const integration = listed?.answer ?? {
      installation_id: 0,
      name: repos.map((repo) => repo.owner).find(isString) ?? 'codehost',
    };
    return (
      placement.place('codehost integration', id, recorded, () =>
        checked(codehostIntegrationFixture, { ...integration, id, repos }),
      ) ?? []
    );
  });
  placement.count(
    'codehost repositories',
    integrations.reduce((sum, integration) => sum + integration.repos.length, 0),
  );
  if (madeUp.length > 0)
    placement.notes.push(
      `Codehost integrations ${madeUp.join(', ')} were only seen through their repositories: installation_id 0, ` +
        `named after the repositories' owner.`,
    );
  return integrations;
}

function deploymentsOf(state: RecordedState, placement: Placement, selfHosted: boolean) {
  const names = new Set<string>();
  let madeUpRevisions = 0;
  let madeUpSecretNames = 0;
  const deployments = [...state.deployments].flatMap(([id, recorded]) => {
    const { answer } = recorded;
    const placed = placement.place('deployment', id, recorded, () => {
      if (answer.source === 'external_container' && !selfHosted)
        return { why: 'source external_container in a workspace that is not self-hosted' };
      if (isString(answer.name) && names.has(answer.name)) return { why: `a second deployment named ${answer.name}` };
      const revisions = revisionsOf(answer, state.revisions.get(id));
      madeUpRevisions += revisions.madeUp;
      const secrets = secretNamesOf(answer);
      madeUpSecretNames += secrets.madeUp;
      return checked(listedDeploymentFixture, deploymentFixtureOf(answer, revisions.list, secrets.list));
    });
    if (!placed) return [];
    names.add(placed.name);
    placement.count('revisions', placed.revisions.length);
    return [placed];
  });
  if (madeUpRevisions > 0) {
    placement.notes.push(
      `${madeUpRevisions} revisions were only named by their deployments (latest_revision_id, ` +
        `active_revision_id): made up from the deployment's answer, DEPLOYED when active, else UNKNOWN.`,
    );
  }
  if (madeUpSecretNames > 0) {
    placement.notes.push(
      `${madeUpSecretNames} deployment secrets' names were masked in the recording: written as ` +
        `RECORDED_SECRET_<n>, n their place in the deployment's list.`,
    );
  }
  return deployments;
}

/** A deployment's secrets by name alone (the answers mask their values); a name the recording masked too is made up. */
function secretNamesOf(answer: Answer): { list: unknown; madeUp: number } {
  if (!Array.isArray(answer.secrets)) return { list: answer.secrets, madeUp: 0 };
  let madeUp = 0;
  const list = answer.secrets.filter(isObject).map(({ name }, index) => {
    if (name !== MASKED_SECRET_VALUE) return { name };
    madeUp++;
    return { name: `RECORDED_SECRET_${index + 1}` };
  });
  return { list, madeUp };
}

function deploymentFixtureOf(answer: Answer, revisions: Answer[], secrets: unknown) {
  const { deployment_type: deploymentType = null, ...sourceConfig } = isObject(answer.source_config)
    ? answer.source_config
    : {};
  return {
    ...withUtcTimes(answer),
    deployment_type: deploymentType,
    source_config: sourceConfig,
    secrets,
    revisions,
  };
}

/**
 * The recorded revisions of a deployment, and those its answer names but the recording never showed, made up from it.
 */
function revisionsOf(
  deployment: Answer,
  recorded: Map<string, Answered> | undefined,
): { list: Answer[]; madeUp: number } {
  const list: Answer[] = [...(recorded?.values() ?? [])].map(({ answer }) => withUtcTimes(answer));
  const latest = field(deployment, 'latest_revision_id', isString);
  const active = field(deployment, 'active_revision_id', isString);
  let madeUp = 0;
  for (const id of new Set([active, latest])) {
    if (id === undefined || list.some((revision) => revision.id === id)) continue;
    const time = utc(id === latest ? deployment.updated_at : deployment.created_at);
    list.push({
      id,
      status: id === active ? 'DEPLOYED' : 'UNKNOWN',
      source: deployment.source,
      source_revision_config: deployment.source_revision_config,
      created_at: time,
      updated_at: time,
    });
    madeUp++;
  }
  return { list, madeUp };
}

/**
 * Destinations writing to the fixture objstore: a recorded bucket becomes a fixture bucket, the fixture key pair signs.
 */
function destinationsOf(
  state: RecordedState,
  placement: Placement,
  context: { buckets: string[]; objstoreKey: string | undefined },
) {
  return [...state.destinations].flatMap(([id, recorded]) => {
    const { answer } = recorded;
    const config = isObject(answer.config) ? answer.config : {};
    const recordedBucket = config.bucket_name;
    const bucket =
      isString(recordedBucket) && isCreatableBucketName(recordedBucket) ? recordedBucket : context.buckets[0]!;
    if (bucket !== recordedBucket)
      placement.notes.push(
        `Destination ${id}: bucket ${JSON.stringify(recordedBucket)} is not a name the objstore can create; it ` +
          `writes to ${bucket}.`,
      );
    const recordedEndpoint = isString(config.endpoint_url) ? config.endpoint_url : null;
    const endpoint = isEmbeddedEndpoint(recordedEndpoint) ? recordedEndpoint : null;
    if (endpoint !== recordedEndpoint)
      placement.notes.push(
        `Destination ${id}: endpoint_url ${recordedEndpoint} left out, so that it writes to the embedded objstore.`,
      );
    const placed = placement.place('destination', id, recorded, () =>
      checked(destinationFixture, {
        ...withUtcTimes(answer),
        config: { ...config, endpoint_url: endpoint, bucket_name: bucket },
        objstore_key: context.objstoreKey,
      }),
    );
    if (placed && !context.buckets.includes(bucket)) context.buckets.push(bucket);
    return placed ?? [];
  });
}

function exportsOf(state: RecordedState, placement: Placement, destinationIds: ReadonlySet<string>) {
  const unlinked: string[] = [];
  const exports = [...state.exports].flatMap(([id, recorded]) => {
    const { answer } = recorded;
    return (
      placement.place('export', id, recorded, () => {
        const destination = answer.bulk_export_destination_id;
        if (!isString(destination) || !destinationIds.has(destination))
          return { why: `its destination ${String(destination)} is not placed` };
        const parent = answer.source_bulk_export_id;
        const keepsParent = parent === null || parent === undefined || state.exports.has(parent as string);
        if (!keepsParent) unlinked.push(id);
        const times = {
          start_time: utc(answer.start_time),
          end_time: utc(answer.end_time),
          finished_at: utc(answer.finished_at),
        };
        return checked(exportFixture, {
          ...withUtcTimes(answer),
          ...times,
          source_bulk_export_id: keepsParent ? parent : null,
        });
      }) ?? []
    );
  });
  if (unlinked.length > 0)
    placement.notes.push(
      `Exports ${unlinked.join(', ')} were spawned by recurring exports the recording does not show: written ` +
        `without source_bulk_export_id.`,
    );
  return exports;
}

type ExportFixtureOut = z.output<typeof exportFixture>;
type SessionFixture = Fixtures['workspaces']['workspaces'][number]['sessions'][number];

/**
 * A tracing project for each exported one the fixtures lack, with synthetic runs over the exports' windows (the
 * recording shows none).
 */
function addExportedProjects(
  exports: readonly ExportFixtureOut[],
  sessions: SessionFixture[],
  placement: Placement,
): void {
  const windows = new Map<string, { start: number; end: number }>();
  for (const exportFixture of exports) {
    const sessionId = exportFixture.session_id;
    if (sessionId === null || sessions.some((session) => session.id === sessionId)) continue;
    const start = parseTimestamp(exportFixture.start_time)!;
    const end = exportFixture.end_time === null ? start + MICROS_PER_DAY : parseTimestamp(exportFixture.end_time)!;
    const window = windows.get(sessionId);
    windows.set(sessionId, { start: Math.min(start, window?.start ?? start), end: Math.max(end, window?.end ?? end) });
  }
  for (const [id, { start, end }] of windows) {
    const days = Math.min(MAX_MADE_UP_DAYS, Math.max(1, Math.ceil((end - startOfUtcDay(start)) / MICROS_PER_DAY)));
    sessions.push({
      id,
      name: `recorded-project-${id.slice(0, 8)}`,
      runs: { count: RUNS_PER_DAY * days, start: formatTimestamp(startOfUtcDay(start)), days },
    });
  }
  if (windows.size > 0) {
    placement.count('tracing projects', windows.size);
    placement.notes.push(
      `Tracing projects ${[...windows.keys()].join(', ')} are only named by exports: made ` +
        `(recorded-project-<id>), with ${RUNS_PER_DAY} synthetic runs a day over the exports' windows.`,
    );
  }
}

function noteLeftOut(
  state: RecordedState,
  placement: Placement,
  placed: { objstoreKey: string | undefined; listedDeployments: readonly unknown[]; exports: readonly unknown[] },
): void {
  placement.notes.push(
    `No secret is written: deployment secrets keep their names (made up where the recording masked them) with ` +
      `made-up values, OAuth providers have no client secret, destinations sign with the fixture key ` +
      `pair ${placed.objstoreKey ?? '(none)'} of objstore.json.`,
  );
  if (placed.listedDeployments.length > 0)
    placement.notes.push(
      "Deployments' tag_value_ids and remote_reconciled are not in the API's answers: written as [] and false.",
    );
  if (placed.exports.length > 0 || state.exportRunAnswers > 0) {
    placement.notes.push(
      'Export runs are not kept: an export that ended keeps its status without runs; one Created or Running ' +
        'starts again as Created and runs.',
    );
  }
}

/** The report as the CLI prints it and REPORT_FILE holds it. */
export function formatFromRecordingReport(report: FromRecordingReport): string {
  const placed = Object.entries(report.placed).map(([kind, count]) => `${count} ${kind}`);
  return [
    `Fixtures written to ${report.directory}`,
    `Workspace ${report.workspace.id} (${report.workspace.name}), API key ${report.workspace.apiKey}`,
    `Start it: localplane start --fixtures ${report.directory}`,
    `Placed: ${placed.length > 0 ? placed.join(', ') : 'nothing'}`,
    `Not placed: ${report.notPlaced.length === 0 ? 'nothing' : report.notPlaced.length}`,
    ...report.notPlaced.map(({ resource, id, why }) => `  - ${resource} ${id}: ${why}`),
    'Notes:',
    ...report.notes.map((note) => `  - ${note}`),
    '',
  ].join('\n');
}
