/**
 * An in-process instance given rows of every kind its tables hold, made through the API as a
 * user makes them: what a snapshot's rows can be changed from (test/snapshots/safety.test.ts, the
 * hostile snapshot files of the fuzz suite).
 */
import type { InProcessLocalplane } from '../../src/index.ts';
import { fixturesOf, inProcessApi, type Reply } from './in-process.ts';
import { credentialsOf, fullKey, workspaceByTier, type FixturesView } from './instance.ts';

function must<T>(what: string, reply: Reply<T>): Reply<T> {
  if (reply.status >= 300) throw new Error(`could not make ${what}: ${reply.status} ${reply.text}`);
  return reply;
}

/**
 * Adds to the seeded state (with a frozen clock): traced runs; a destination with a session
 * token; a completed export (filtered, some fields) whose run failed once; a recurring export with
 * a child, cancelled; an export of all experiments running with its runs; a deployment whose
 * revision moved; a deletion pending; an OAuth provider, a listener and an objstore key of the API.
 */
export async function fillEveryTable(lp: InProcessLocalplane): Promise<FixturesView> {
  const fixtures = await fixturesOf(lp);
  const admin = inProcessApi(lp);
  const plus = workspaceByTier(fixtures, 'plus');
  const api = inProcessApi(lp, plus);
  const session = plus.sessions[0]!;
  const day = session.last_run_start_time.slice(0, 10);
  const oneDay = { start_time: `${day}T00:00:00Z`, end_time: `${day}T23:00:00Z` };
  must(
    'traced runs',
    await admin.post(`/_localplane/sessions/${session.id}/runs`, { count: 20, start_time: oneDay.start_time, days: 1 }),
  );
  const destination = must(
    'a destination',
    await api.post('/api/v1/bulk-exports/destinations', {
      display_name: 'every row',
      config: {
        bucket_name: fixtures.objstore.buckets[0],
        prefix: 'every-row',
        endpoint_url: fixtures.objstore.endpoint_url,
      },
      credentials: { ...credentialsOf(fullKey(fixtures)), session_token: 'every-row-token' },
    }),
  ).body;
  must(
    'a fault',
    await admin.post('/_localplane/faults/export-runs', {
      mode: 'fail',
      count: 1,
      attempts: 1,
      message: 'failed once on purpose',
    }),
  );
  must(
    'an export',
    await api.post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.id,
      session_id: session.id,
      ...oneDay,
      filter: 'eq(is_root, true)',
      export_fields: ['id', 'name', 'start_time', 'tags'],
    }),
  );
  await lp.clock.advance(3600);
  const now = Date.parse((await admin.get('/_localplane/clock')).body.now);
  const recurring = must(
    'a recurring export',
    await api.post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.id,
      session_id: session.id,
      start_time: new Date(now - 30 * 3600_000).toISOString(),
      interval_hours: 24,
    }),
  ).body;
  must(
    'a fault',
    await admin.post('/_localplane/faults/export-runs', { mode: 'slow', count: 10, delay_seconds: 100_000 }),
  );
  must(
    'an export',
    await api.post('/api/v1/bulk-exports', {
      bulk_export_destination_id: destination.id,
      all_experiments: true,
      ...oneDay,
    }),
  );
  await lp.clock.advance(1);
  // Cancelled once it spawned its child: a recurring export whose start a changed value moves decades back spawns a
  // child for every interval since.
  must(
    'a recurring export cancelled',
    await api.patch(`/api/v1/bulk-exports/${recurring.id}`, { status: 'Cancelled' }),
  );
  const integration = plus.integrations[0]!;
  must(
    'a deployment',
    await api.post('/v2/deployments', {
      name: 'every-row-agent',
      source: 'codehost',
      source_config: {
        integration_id: integration.id,
        repo_url: integration.repos[0]!.url,
        deployment_type: 'dev',
        resource_spec: { min_scale: 1, labels: { team: 'rows' } },
      },
      source_revision_config: { repo_ref: 'main', graph_config_path: 'graph.json' },
      secrets: [{ name: 'EVERY_ROW_KEY', value: 'every-row-secret' }],
      secret_references: null,
    }),
  );
  await lp.clock.advance(5);
  must('a slow deletion', await admin.patch('/_localplane/config', { deployment_deletion_seconds: 100_000 }));
  must('a deletion', await api.delete(`/v2/deployments/${plus.deployments[0]!.id}`));
  must('the limits as they were', await admin.patch('/_localplane/config', { deployment_deletion_seconds: 0 }));
  must(
    'an OAuth provider',
    await api.post('/v2/auth/providers', {
      provider_id: 'every-row',
      name: 'Every row',
      client_id: 'every-row-client',
      client_secret: 'every-row-client-secret',
      auth_url: 'https://rows.example/authorize',
      token_url: 'https://rows.example/token',
    }),
  );
  const enterprise = workspaceByTier(fixtures, 'enterprise');
  must(
    'a listener',
    await inProcessApi(lp, enterprise).post('/v2/listeners', {
      compute_type: 'k8s',
      compute_id: 'every-row',
      compute_config: { k8s_namespaces: ['rows'] },
    }),
  );
  must(
    'an objstore key',
    await admin.post('/_localplane/objstore/keys', {
      access_key_id: 'LPEVERYROWKEY0000001',
      secret_access_key: 'every-row-key-secret',
      permissions: ['get'],
      workspace_id: plus.id,
    }),
  );
  return fixtures;
}
