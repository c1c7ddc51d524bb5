import { Hono } from 'hono';
import type { DashboardApi } from '../api.ts';
import { renderView } from '../layout.tsx';

interface Health {
  status: string;
  objstore_url: string | null;
  uptime_seconds: number;
}

interface StateDump {
  clock: { now: string; frozen: boolean };
  workspaces: {
    id: string;
    name: string;
    tier: string;
    sessions: unknown[];
    destinations: unknown[];
    bulk_exports: { status: string }[];
    deployments: unknown[];
  }[];
}


/** /ui: health, the clock, the workspaces with their counts. */
export function overviewView(api: DashboardApi) {
  const app = new Hono();
  app.get('/', async (c) => {
    const [health, state] = await Promise.all([api.get<Health>('/_localplane/health'), api.get<StateDump>('/_localplane/state')]);
    const exportsIn = (status: string) => state.workspaces.reduce((sum, workspace) => sum + workspace.bulk_exports.filter((entry) => entry.status === status).length, 0);
    return renderView(c, {
      title: 'Overview',
      active: 'overview',
      children: (
        <>
          <section class="cards" aria-label="Summary">
            <div class="card">
              <h2>Health</h2>
              <div class="figure">{health.status}</div>
              <div class="muted">up {Math.round(health.uptime_seconds)} s</div>
            </div>
            <div class="card">
              <h2>Clock</h2>
              <div class="figure mono">{state.clock.now}</div>
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
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Id</th>
                <th scope="col">Tier</th>
                <th scope="col" class="num">Tracing projects</th>
                <th scope="col" class="num">Destinations</th>
                <th scope="col" class="num">Exports</th>
                <th scope="col" class="num">Deployments</th>
              </tr>
            </thead>
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
        </>
      ),
    });
  });
  return app;
}
