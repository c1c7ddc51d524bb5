import { badRequest } from '../shared/errors.ts';
import { MICROS_PER_SECOND, type Micros } from '../shared/time.ts';
import { REVISION_STEP_STATUSES, type RevisionStepStatus } from '../config.ts';
import type { LogEntry, LogLevel, LogsPage, LogsRequest, RevisionStatus, SourceRevisionConfig } from './schemas.ts';
import type { RevisionEventRow, RevisionRow } from './store.ts';

export type LogStream = 'build' | 'deploy';

/** What one status reached writes to a stream: lines at the time it was reached. */
type Lines = (revision: RevisionRow, config: SourceRevisionConfig) => { level: LogLevel; message: string }[];

const info = (...messages: string[]) => messages.map((message) => ({ level: 'INFO' as const, message }));

function sourceOf(revision: RevisionRow, config: SourceRevisionConfig): string {
  if (config.source_tarball_path) return `source tarball ${config.source_tarball_path}`;
  if (config.image_uri) return `image ${config.image_uri}`;
  if (config.repo_ref)
    return `ref ${config.repo_ref}${config.repo_commit_sha ? ` (commit ${config.repo_commit_sha})` : ''}`;
  return `the ${revision.source} source`;
}

/** The stock line of an early ending, when the knob that forced it gave none. */
const STOCK_ENDINGS: Partial<Record<RevisionStatus, { stream: LogStream; level: LogLevel; message: string }>> = {
  CREATE_FAILED: {
    stream: 'build',
    level: 'ERROR',
    message: 'Revision creation failed: the deployment could not be provisioned.',
  },
  SKIPPED: {
    stream: 'build',
    level: 'WARNING',
    message: 'Revision skipped: a newer build of the same source made it unnecessary; the active revision stays.',
  },
  BUILD_FAILED: {
    stream: 'build',
    level: 'ERROR',
    message: 'Build failed: installing the dependencies exited with status 1.',
  },
  DEPLOY_FAILED: {
    stream: 'deploy',
    level: 'ERROR',
    message: 'Deploy failed: the server did not become healthy in time.',
  },
};

const STREAM_LINES: Record<LogStream, Partial<Record<RevisionStatus, Lines>>> = {
  build: {
    CREATING: (revision, config) => info(`Creating revision ${revision.id} from ${sourceOf(revision, config)}.`),
    QUEUED: () => info('Queued for a build.'),
    AWAITING_BUILD: () => info('Waiting for a builder.'),
    BUILDING: (revision, config) =>
      config.image_uri && !config.source_tarball_path && !config.repo_ref
        ? info(`Using the pushed image ${config.image_uri}: nothing to build.`)
        : info(
            `Fetching ${sourceOf(revision, config)}.`,
            'Installing dependencies.',
            `Building the image from ${config.graph_config_path ?? 'the graph config'}.`,
          ),
    AWAITING_DEPLOY: () => info('Build succeeded.'),
  },
  deploy: {
    AWAITING_DEPLOY: () => info('Waiting to deploy.'),
    DEPLOYING: (revision) =>
      info(`Deploying revision ${revision.id}.`, 'Starting the server.', 'Running database migrations.'),
    DEPLOYED: (revision) => info(`Server is healthy: revision ${revision.id} is live.`),
  },
};

/** Statuses of a revision that got as far as deploying: an interruption after one is told in the deploy stream. */
const DEPLOY_STAGE: ReadonlySet<RevisionStatus> = new Set([
  'AWAITING_DEPLOY',
  'DEPLOYING',
  'DEPLOYED',
  'DEPLOY_FAILED',
]);

/**
 * The statuses a revision went through before the first one recorded here: a seeded revision
 * moved through them before localplane started, at its creation time.
 */
function earlierSteps(status: RevisionStatus): readonly RevisionStatus[] {
  const through = (step: RevisionStepStatus) =>
    REVISION_STEP_STATUSES.slice(0, REVISION_STEP_STATUSES.indexOf(step) + 1);
  switch (status) {
    case 'DEPLOYED':
    case 'DEPLOY_FAILED':
      return REVISION_STEP_STATUSES;
    case 'BUILD_FAILED':
      return through('BUILDING');
    case 'SKIPPED':
      return through('QUEUED');
    default: {
      const index = (REVISION_STEP_STATUSES as readonly string[]).indexOf(status);
      return index === -1 ? ['CREATING'] : REVISION_STEP_STATUSES.slice(0, index);
    }
  }
}

/** Every status the revision reached, in order: those recorded, after those a seeded revision had reached before. */
export function revisionHistory(
  revision: RevisionRow,
  recorded: readonly RevisionEventRow[],
): Omit<RevisionEventRow, 'revision_id'>[] {
  const first = recorded[0];
  const known = first ?? { status: revision.status, at: revision.updated_at, detail: null };
  const earlier =
    known.status === 'CREATING'
      ? []
      : earlierSteps(known.status).map((status) => ({ status, at: revision.created_at, detail: null }));
  return [...earlier, ...(first ? recorded : [known])];
}

/**
 * A revision's build or deploy log: the lines each status it reached writes, stamped with the
 * emulator-clock time it reached it, and the failure line of an early ending (the knob's words,
 * or the stage's stock line). Deterministic: the same history gives the same lines and ids.
 */
export function revisionLog(
  revision: RevisionRow,
  recorded: readonly RevisionEventRow[],
  stream: LogStream,
): LogEntry[] {
  const config = JSON.parse(revision.source_revision_config) as SourceRevisionConfig;
  const history = revisionHistory(revision, recorded);
  const entries: LogEntry[] = [];
  const write = (at: Micros, level: LogLevel, message: string) =>
    entries.push({
      id: `${revision.id}-${stream}-${entries.length + 1}`,
      timestamp: Math.floor(at / 1000),
      level,
      message,
    });
  for (const [index, event] of history.entries()) {
    for (const line of STREAM_LINES[stream][event.status]?.(revision, config) ?? [])
      write(event.at, line.level, line.message);
    const ending = STOCK_ENDINGS[event.status];
    if (ending?.stream === stream) write(event.at, ending.level, event.detail ?? ending.message);
    const deploying = history.slice(0, index).some(({ status }) => DEPLOY_STAGE.has(status));
    if (event.status === 'INTERRUPTED' && (deploying ? 'deploy' : 'build') === stream) {
      write(event.at, 'WARNING', 'Interrupted: a newer revision of the deployment superseded this one.');
    }
  }
  return entries;
}

/** Several revisions' entries as one log, oldest first (entries of the same millisecond in revision order). */
export function mergedLog(logs: readonly LogEntry[][]): LogEntry[] {
  return logs.flat().sort((a, b) => a.timestamp - b.timestamp);
}

const INVALID_OFFSET = (offset: string) => `Invalid offset: ${offset} is not a next_offset of this log.`;

/**
 * One page of a log as the hosted CLI reads it: filtered by level, text and time, in the order
 * asked, starting after the entry `offset` names. `next_offset` names the page's last entry (pass
 * it back for what follows, also what is written later); on an empty page it is the offset given.
 */
export function logsPage(entries: readonly LogEntry[], request: LogsRequest): LogsPage {
  const text = request.query?.toLowerCase();
  const millis = (micros: Micros | null | undefined) => (micros == null ? null : micros / (MICROS_PER_SECOND / 1000));
  const [startMillis, endMillis] = [millis(request.start_time), millis(request.end_time)];
  const matches = (entry: LogEntry) =>
    (!request.level || entry.level === request.level) &&
    (!text || entry.message.toLowerCase().includes(text)) &&
    (startMillis === null || entry.timestamp >= Math.floor(startMillis)) &&
    (endMillis === null || entry.timestamp < endMillis);
  const ordered = request.order === 'asc' ? entries : [...entries].reverse();
  let after = ordered;
  if (request.offset) {
    const position = ordered.findIndex((entry) => entry.id === request.offset);
    if (position === -1) throw badRequest(INVALID_OFFSET(request.offset));
    after = ordered.slice(position + 1);
  }
  const logs = after.filter(matches).slice(0, request.limit);
  return { logs, next_offset: logs.at(-1)?.id ?? request.offset ?? null };
}
