import { Hono } from 'hono';
import type { Health, State } from '../../admin/schemas.ts';
import type { RequestStats } from '../../journal/schemas.ts';
import type { DashboardApi } from '../api.ts';
import { renderView, TableHead } from '../layout.tsx';
import { EmulatorTime, Timestamp } from '../time.tsx';

const ACTIVITY_MINUTES = 30;
const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

/**
 * Requests per minute by status class (a chart, and its totals as text) and the latest errors, refreshed every few
 * seconds.
 */
function Activity({ stats }: { stats: RequestStats }) {
  const chart = {
    x: stats.minutes.map((minute) => Date.parse(minute.start) / 1000),
    series: STATUS_CLASSES.map((statusClass) => ({
      label: statusClass,
      values: stats.minutes.map((minute) => minute.by_status_class[statusClass]),
    })),
  };
  const totals = STATUS_CLASSES.map(
    (statusClass) =>
      `${stats.minutes.reduce((sum, minute) => sum + minute.by_status_class[statusClass], 0)} ${statusClass}`,
  ).join(', ');
  return (
    <section
      id="activity"
      aria-labelledby="activity-heading"
      data-route="GET /_localplane/requests/stats"
      hx-get="/ui/activity"
      hx-trigger="every 5s"
      hx-swap="outerHTML"
    >
      <h2 id="activity-heading">Requests per minute</h2>
      <figure class="chart" data-chart={JSON.stringify(chart)}>
        <figcaption class="muted">
          The last {ACTIVITY_MINUTES} minutes of the wall clock (not the emulator's), by status class: {totals}.{' '}
          <a href="/ui/requests">All requests</a>
        </figcaption>
      </figure>
      <h2 id="errors-heading">Latest errors</h2>
      {stats.latest_errors.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <table aria-labelledby="errors-heading">
          <TableHead columns={['Time', 'Source', 'Request', 'Status']} numeric={['Status']} />
          <tbody>
            {stats.latest_errors.map((entry) => (
              <tr>
                <td class="mono">
                  <EmulatorTime at={entry.time} wall={entry.wall_time} precise />
                </td>
                <td>{entry.source}</td>
                <td class="mono">
                  <a href={`/ui/requests/${entry.id}`}>
                    {entry.method} {entry.path}
                  </a>
                </td>
                <td class={`num status-${Math.floor(entry.status / 100)}`}>{entry.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const readStats = (api: DashboardApi) =>
  api.get<RequestStats>(`/_localplane/requests/stats?minutes=${ACTIVITY_MINUTES}&errors=10`);

/** /ui: health, the clock, the workspaces with their counts, the requests of the last minutes. */
export function overviewView(api: DashboardApi) {
  const app = new Hono();
  app.get('/', async (c) => {
    const [health, state, stats] = await Promise.all([
      api.get<Health>('/_localplane/health'),
      api.get<State>('/_localplane/state'),
      readStats(api),
    ]);
    const exportsIn = (status: string) =>
      state.workspaces.reduce(
        (sum, workspace) => sum + workspace.bulk_exports.filter((entry) => entry.status === status).length,
        0,
      );
    return renderView(c, {
      title: 'Overview',
      active: 'overview',
      charts: true,
      children: (
        <>
          <section
            class="cards"
            aria-label="Summary"
            data-route="GET /_localplane/health, GET /_localplane/state, GET /_localplane/fixtures"
          >
            <div class="card">
              <h2>Health</h2>
              <div class="figure">{health.status}</div>
              <div class="muted">up {Math.round(health.uptime_seconds)} s</div>
            </div>
            <div class="card">
              <h2>Clock</h2>
              <div class="figure mono">
                <Timestamp at={state.clock.now} />
              </div>
              <div class="muted">
                {state.clock.frozen ? 'frozen' : 'running'} · <a href="/ui/clock">change</a>
              </div>
            </div>
            <div class="card">
              <h2>Exports running</h2>
              <div class="figure">{exportsIn('Running')}</div>
              <div class="muted">
                {exportsIn('Created')} waiting to start · <a href="/ui/exports">all exports</a>
              </div>
            </div>
            <div class="card">
              <h2>Objstore</h2>
              <div class="figure mono">{health.objstore_url ?? 'not bound yet'}</div>
              <div class="muted">
                <a href="/ui/objects">browse objects</a>
              </div>
            </div>
          </section>
          <h2 id="workspaces">Workspaces</h2>
          <table aria-labelledby="workspaces">
            <TableHead
              columns={['Name', 'Id', 'Tier', 'Tracing projects', 'Destinations', 'Exports', 'Deployments']}
              numeric={['Tracing projects', 'Destinations', 'Exports', 'Deployments']}
            />
            <tbody>
              {state.workspaces.map((workspace) => (
                <tr>
                  <th scope="row">{workspace.name}</th>
                  <td class="mono">{workspace.id}</td>
                  <td>{workspace.tier}</td>
                  <td class="num">{workspace.sessions.length}</td>
                  <td class="num">{workspace.destinations.length}</td>
                  <td class="num">
                    <a href={`/ui/exports?workspace_id=${workspace.id}`}>{workspace.bulk_exports.length}</a>
                  </td>
                  <td class="num">
                    <a href={`/ui/deployments?workspace_id=${workspace.id}`}>{workspace.deployments.length}</a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Activity stats={stats} />
        </>
      ),
    });
  });
  app.get('/activity', async (c) => c.html(<Activity stats={await readStats(api)} />));
  return app;
}
