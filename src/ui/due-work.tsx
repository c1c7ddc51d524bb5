// The due work of GET /_localplane/tasks, as the Clock view and a deployment's page show it.
import type { ListedTask, Task } from '../admin/schemas.ts';
import type { ExportRunStepTask } from '../bulk-exports/schemas.ts';
import type { DeploymentsList } from '../deployments/schemas.ts';
import type { DashboardApi } from './api.ts';
import { fromNow } from './spans.ts';
import { readFixtures } from './fixtures.ts';
import { TableHead } from './layout.tsx';
import { Timestamp } from './time.tsx';

/** What the due-work table names: workspaces, and the deployments tasks move, by id. */
export interface Names {
  workspaces: ReadonlyMap<string, string>;
  deployments: ReadonlyMap<string, string>;
}

export const shortId = (id: string) => id.slice(0, 8);

export const deploymentPath = (workspaceId: string, deploymentId: string) =>
  `/ui/deployments/${deploymentId}?workspace_id=${workspaceId}`;
const exportPath = (workspaceId: string, exportId: string) => `/ui/exports/${exportId}?workspace_id=${workspaceId}`;

const RUN_STEP_WORDS: Record<ExportRunStepTask['step'], string> = {
  start: 'starts writing its first file',
  next_file: 'writes its next file',
  retry: 'retries',
  resume: 'resumes',
};

/** What the task does, in words (a task listed, or one that ran). */
export function describeTask(task: Task): string {
  switch (task.kind) {
    case 'revision_step':
      return `Revision moves from ${task.from_status} to ${task.to_status}`;
    case 'deployment_deletion':
      return 'Deletion completes: the deployment is gone';
    case 'export_dispatch':
      return "The workspace's waiting exports and runs start, as the limits allow";
    case 'export_run_step':
      return (
        `Export ` +
        `run ${RUN_STEP_WORDS[task.step]}${task.retry_number > 0 ? ` (attempt ${task.retry_number + 1})` : ''}`
      );
    case 'export_run_time_limit':
      return 'Export run reaches its time limit: TimedOut if still running';
    case 'export_time_limit':
      return 'Export reaches its time limit: TimedOut if still running';
    case 'recurring_export_spawn':
      return `Recurring export makes its child ${task.child_index}`;
  }
}

/** The resource the task acts on, linked to its view. */
export function TaskResource({ task, names }: { task: Task; names: Names }) {
  const workspace = task.workspace_id;
  switch (task.kind) {
    case 'revision_step':
    case 'deployment_deletion': {
      const name = names.deployments.get(task.deployment_id) ?? shortId(task.deployment_id);
      const revision = task.kind === 'revision_step' ? task.revision_id : null;
      return (
        <>
          <a href={`${deploymentPath(workspace, task.deployment_id)}${revision ? `#revision-${revision}` : ''}`}>
            deployment {name}
          </a>
          {revision && <span class="mono"> · revision {shortId(revision)}</span>}
        </>
      );
    }
    case 'export_dispatch':
      return <a href={`/ui/exports?workspace_id=${workspace}`}>exports of the workspace</a>;
    case 'export_run_step':
    case 'export_run_time_limit':
      return (
        <>
          <a href={`${exportPath(workspace, task.bulk_export_id)}#run-${task.run_id}`}>
            export {shortId(task.bulk_export_id)}
          </a>
          <span class="mono"> · run {shortId(task.run_id)}</span>
        </>
      );
    case 'export_time_limit':
    case 'recurring_export_spawn':
      return <a href={exportPath(workspace, task.bulk_export_id)}>export {shortId(task.bulk_export_id)}</a>;
  }
}

/** When a queued task is due, or since when a running one runs, and how far that is from the emulator clock's now. */
function TaskTime({ task, now }: { task: ListedTask; now: string }) {
  if (task.state === 'queued') {
    return (
      <>
        <td class="mono">
          <Timestamp at={task.due_at} />
        </td>
        <td>{fromNow(task.due_at, now)}</td>
      </>
    );
  }
  return (
    <>
      <td>
        <span class="badge task-running">running</span> since{' '}
        <span class="mono">
          <Timestamp at={task.started_at} />
        </span>
      </td>
      <td>{fromNow(task.started_at, now)}</td>
    </>
  );
}

/**
 * The due work as a table: what, which resource, when (or running since when), in how long (from the emulator clock's
 * now).
 */
export function DueWork({
  tasks,
  names,
  now,
  caption,
}: {
  tasks: readonly ListedTask[];
  names: Names;
  now: string;
  caption: string;
}) {
  if (tasks.length === 0) return <p class="muted">Nothing is scheduled.</p>;
  return (
    <table class="due-work">
      <caption class="visually-hidden">{caption}</caption>
      <TableHead columns={['What', 'Resource', 'Workspace', 'Due at', 'In']} />
      <tbody>
        {tasks.map((task) => (
          <tr data-kind={task.kind} data-state={task.state}>
            <td>{describeTask(task)}</td>
            <td>
              <TaskResource task={task} names={names} />
            </td>
            <td>{names.workspaces.get(task.workspace_id) ?? shortId(task.workspace_id)}</td>
            <TaskTime task={task} now={now} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The names the table shows: workspaces from the fixtures, deployments from each workspace's list (the API's
 * deployment_ids filter).
 */
export async function namesFor(api: DashboardApi, tasks: readonly Task[]): Promise<Names> {
  const { workspaces } = await readFixtures(api);
  const wanted = new Map<string, Set<string>>();
  for (const task of tasks) {
    if (task.kind !== 'revision_step' && task.kind !== 'deployment_deletion') continue;
    if (!wanted.has(task.workspace_id)) wanted.set(task.workspace_id, new Set());
    wanted.get(task.workspace_id)!.add(task.deployment_id);
  }
  const deployments = new Map<string, string>();
  await Promise.all(
    [...wanted].map(async ([workspaceId, ids]) => {
      // The list pages by 100 at most: a name not found here shows as a short id.
      const query = new URLSearchParams({ deployment_ids: [...ids].slice(0, 100).join(','), limit: '100' });
      const page = await api.json<DeploymentsList>('GET', `/v2/deployments?${query}`, { workspaceId });
      for (const deployment of page.resources) deployments.set(deployment.id, deployment.name);
    }),
  );
  return { workspaces: new Map(workspaces.map((workspace) => [workspace.id, workspace.name])), deployments };
}
