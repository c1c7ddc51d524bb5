// The scenario the recording tests record: a client of the real `record()` proxy in front of an upstream localplane.
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { record, type Localplane } from '../../../src/index.ts';
import { OBJSTORE_PERMISSIONS } from '../../../src/objstore/index.ts';
import { credentialsOf, type FixturesView, type FixtureWorkspace } from '../../support/instance.ts';
import { s3For } from '../../support/objstore.ts';
import type { DestinationResponse, ExportResponse, RunResponse } from '../../../src/bulk-exports/schemas.ts';
import type { ListenerResponse } from '../../../src/deployments/listener-schemas.ts';
import type {
  CodehostIntegration,
  DeploymentResponse,
  DeploymentsList,
  OAuthProviderResponse,
  RevisionResponse,
  RevisionsList,
} from '../../../src/deployments/schemas.ts';

/** The bucket the recorded destination writes to: made upstream before the recording, a name no fixture has. */
export const RECORDED_BUCKET = 'recorded-landing';
/** A key pair added upstream before the recording: the recorded destination signs with it. */
export const RECORDED_OBJSTORE_KEY = {
  access_key_id: 'RECORDEDKEY000000042',
  secret_access_key: 'recorded-objstore-secret-key-1234',
};
const DEPLOYMENT_SECRET = 'sk-recorded-deployment-secret-4711';
const CLIENT_SECRET = 'recorded-oauth-client-secret-0815';
const SCRATCH_CLIENT_SECRET = 'scratch-oauth-client-secret-2323';

interface Answer<T> {
  status: number;
  body: T;
}

/** What the client of the recorder got: the answers the tests compare with, and the secrets it sent. */
export interface RecordedScenario {
  workspace: FixtureWorkspace;
  /** A destination made upstream before the recording began, which the recording reads. */
  earlierDestinationId: string;
  destination: DestinationResponse;
  /** Polled until it completed. */
  completedExport: ExportResponse;
  /** Created last, as it answered then (not run). */
  pendingExport: ExportResponse;
  listener: ListenerResponse;
  provider: OAuthProviderResponse;
  /** The last listing of the workspace's deployments: the deleted one is still AWAITING_DELETE in it. */
  deployments: DeploymentResponse[];
  deletedDeploymentId: string;
  /** The revisions of the deployments not deleted, as last listed, by deployment id. */
  revisions: Map<string, RevisionResponse[]>;
  /** How far the test moved the upstream's clock while it recorded. */
  secondsPassed: number;
  /** Every API key, key pair secret, deployment secret value and OAuth client secret the client sent. */
  secrets: string[];
  /** Each exchange whose status was not the one the scenario means, as `<method> <path>: <status>, meant <status>`. */
  unexpected: string[];
}

export interface ScenarioOptions {
  upstream: Localplane;
  out: string;
  /**
   * Where the recorder sends requests on to; default the upstream itself (a proxy of the test's in front of it, to
   * drift on purpose).
   */
  via?: string;
}

/**
 * Records, as the self-hosted fixture workspace: destinations (one made before the recording, one
 * created, patched and deleted), an export polled to completion and its runs, listeners, deployments
 * created, patched, revised and deleted, OAuth provider CRUD, codehost repositories, 404, 409 and 422
 * answers, and last an export left pending and the deployments listed. The recorder's clock is the
 * upstream's frozen one, moved as a user's time would pass.
 */
export async function recordScenario({
  upstream,
  out,
  via = upstream.apiUrl,
}: ScenarioOptions): Promise<RecordedScenario> {
  const fixtures = (await (await fetch(`${upstream.apiUrl}/_localplane/fixtures`)).json()) as FixturesView;
  const workspace = fixtures.workspaces.find((candidate) => candidate.self_hosted)!;
  const auth = { 'X-API-Key': workspace.api_key, 'X-Tenant-Id': workspace.id };
  const [fullKey, rotatedKey] = fixtures.objstore.keys.filter((key) =>
    OBJSTORE_PERMISSIONS.every((permission) => key.permissions.includes(permission)),
  );
  const [full, rotated] = [credentialsOf(fullKey!), credentialsOf(rotatedKey!)];

  await s3For(upstream.objstoreUrl, fullKey!).send(new CreateBucketCommand({ Bucket: RECORDED_BUCKET }));
  const admin = async (method: string, path: string, body: unknown) => {
    const answer = await fetch(`${upstream.apiUrl}/_localplane${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!answer.ok) throw new Error(`the upstream refused ${method} ${path}: ${answer.status} ${await answer.text()}`);
  };
  await admin('POST', '/objstore/keys', {
    ...RECORDED_OBJSTORE_KEY,
    permissions: ['create', 'get', 'delete', 'multipart'],
  });
  // A deleted deployment is listed AWAITING_DELETE for a while, as the hosted service lists it.
  await admin('PATCH', '/config', { deployment_deletion_seconds: 300 });
  const earlier = await fetch(`${upstream.apiUrl}/api/v1/bulk-exports/destinations`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({
      display_name: 'made before the recording',
      config: { bucket_name: 'exports', prefix: 'earlier' },
      credentials: full,
    }),
  });
  const earlierDestinationId = ((await earlier.json()) as { id: string }).id;

  const startedAt = upstream.clock.now();
  const recorder = await record({ upstream: via, out, port: 0, now: () => upstream.clock.now() / 1000 });
  const unexpected: string[] = [];
  /** An answer, its body as the shape `T` the scenario expects of it (each is checked by the tests that read it). */
  const send = async <T = unknown>(meant: number, method: string, path: string, body?: unknown): Promise<Answer<T>> => {
    const response = await fetch(`${recorder.url}${path}`, {
      method,
      headers: body === undefined ? auth : { ...auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== meant) unexpected.push(`${method} ${path}: ${response.status}, meant ${meant}`);
    return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
  };

  try {
    const destination = await send<DestinationResponse>(200, 'POST', '/api/v1/bulk-exports/destinations', {
      destination_type: 'objstore',
      display_name: 'Recorded warehouse',
      config: { bucket_name: RECORDED_BUCKET, prefix: 'traces/recorded' },
      credentials: RECORDED_OBJSTORE_KEY,
    });
    await send(200, 'GET', `/api/v1/bulk-exports/destinations/${earlierDestinationId}`);
    const scratch = await send<DestinationResponse>(200, 'POST', '/api/v1/bulk-exports/destinations', {
      display_name: 'scratch',
      config: { bucket_name: RECORDED_BUCKET, prefix: 'scratch', endpoint_url: upstream.objstoreUrl },
      credentials: full,
    });
    await send(200, 'PATCH', `/api/v1/bulk-exports/destinations/${scratch.body.id}`, { credentials: rotated });
    await send(200, 'GET', '/api/v1/bulk-exports/destinations');
    const exportBody = {
      bulk_export_destination_id: destination.body.id,
      session_id: workspace.sessions[0]!.id,
      start_time: '2026-10-01T00:00:00Z',
      end_time: '2026-10-02T00:00:00Z',
      format_version: 'v2_beta',
      compression: 'snappy',
    };
    const created = await send<ExportResponse>(200, 'POST', '/api/v1/bulk-exports', exportBody);
    let completedExport = (await send<ExportResponse>(200, 'GET', `/api/v1/bulk-exports/${created.body.id}`)).body;
    for (let polls = 1; completedExport.status !== 'Completed'; polls++) {
      if (polls === 10) throw new Error(`the upstream export did not complete: ${JSON.stringify(completedExport)}`);
      await upstream.clock.advance(30);
      completedExport = (await send<ExportResponse>(200, 'GET', `/api/v1/bulk-exports/${created.body.id}`)).body;
    }
    const runs = await send<RunResponse[]>(200, 'GET', `/api/v1/bulk-exports/${created.body.id}/runs`);
    await send(200, 'GET', `/api/v1/bulk-exports/${created.body.id}/runs/${runs.body[0].id}`);
    await send(204, 'DELETE', `/api/v1/bulk-exports/destinations/${scratch.body.id}`);

    const listenerBody = {
      compute_type: 'k8s',
      compute_id: 'recorded-cluster',
      compute_config: { k8s_namespaces: ['graphs', 'staging'] },
      version: '1.2.0',
    };
    const posted = await send<ListenerResponse>(201, 'POST', '/v2/listeners', listenerBody);
    await send(200, 'GET', '/v2/listeners');
    const listener = (
      await send<ListenerResponse>(200, 'PATCH', `/v2/listeners/${posted.body.id}`, { version: '1.3.0' })
    ).body;
    await send(409, 'POST', '/v2/listeners', listenerBody);
    const spare = await send<ListenerResponse>(201, 'POST', '/v2/listeners', {
      ...listenerBody,
      compute_id: 'spare-cluster',
    });
    await send(204, 'DELETE', `/v2/listeners/${spare.body.id}`);

    const deploymentIds: string[] = [];
    for (const name of ['recorded-graph-a', 'recorded-graph-b', 'recorded-graph-c']) {
      const deployment = await send<DeploymentResponse>(201, 'POST', '/v2/deployments', {
        name,
        source: 'external_container',
        source_config: { listener_id: listener.id, listener_config: { k8s_namespace: 'graphs' } },
        source_revision_config: { image_uri: `registry.example/${name}:1` },
        secrets: [{ name: 'OPENAI_API_KEY', value: DEPLOYMENT_SECRET }],
        secret_references: [{ name: 'DB_PASSWORD', secret_name: `${name}-secrets`, secret_key: 'db-password' }],
      });
      deploymentIds.push(deployment.body.id);
    }
    const [patched, revised, deleted] = deploymentIds as [string, string, string];
    const firstRevisions = await send<RevisionsList>(200, 'GET', `/v2/deployments/${patched}/revisions`);
    await upstream.clock.advance(600);
    await send(200, 'GET', `/v2/deployments/${patched}/revisions/${firstRevisions.body.resources[0].id}`);
    await send(200, 'PATCH', `/v2/deployments/${patched}`, {
      source_revision_config: { image_uri: 'registry.example/recorded-graph-a:2' },
    });
    await send(200, 'PATCH', `/v2/deployments/${patched}`, {
      secrets: [{ name: 'OPENAI_API_KEY', value: `${DEPLOYMENT_SECRET}-rotated` }],
    });
    await send(201, 'POST', `/v2/deployments/${revised}/revisions`, {
      source_revision_config: { image_uri: 'registry.example/recorded-graph-b:2' },
    });
    await upstream.clock.advance(600);
    await send(200, 'GET', `/v2/deployments/${patched}`);
    await send(200, 'GET', '/v2/deployments?name_contains=recorded');

    const provider = await send<OAuthProviderResponse>(200, 'POST', '/v2/auth/providers', {
      provider_id: 'recorded-sso',
      name: 'Recorded SSO',
      client_id: 'recorded-client',
      client_secret: CLIENT_SECRET,
      auth_url: 'https://sso.recorded.example/authorize',
      token_url: 'https://sso.recorded.example/token',
      uses_pkce: true,
    });
    await send(200, 'POST', '/v2/auth/providers', {
      provider_id: 'scratch-chat',
      name: 'Chat',
      client_id: 'chat-client',
      client_secret: SCRATCH_CLIENT_SECRET,
      auth_url: 'https://chat.example/authorize',
      token_url: 'https://chat.example/token',
    });
    await send(200, 'GET', '/v2/auth/providers');
    await send(200, 'GET', '/v2/auth/providers/scratch-chat');
    await send(200, 'PATCH', '/v2/auth/providers/scratch-chat', {
      name: 'Chat desk',
      client_secret: `${SCRATCH_CLIENT_SECRET}-rotated`,
    });
    await send(200, 'DELETE', '/v2/auth/providers/scratch-chat');
    await send(404, 'GET', '/v2/auth/providers/scratch-chat');

    await send(404, 'GET', '/v2/deployments/00000000-0000-4000-8000-000000000000');
    await send(422, 'GET', '/v2/listeners?limit=101');
    await send(422, 'POST', '/v2/deployments', { name: 'no-source' });
    await send(422, 'GET', '/v1/integrations/forge/codehost/not-a-uuid/repos');
    const integrations = await send<CodehostIntegration[]>(200, 'GET', '/v1/integrations/forge/codehost/install');
    await send(200, 'GET', `/v1/integrations/forge/codehost/${integrations.body[0].id}/repos`);

    const pending = await send<ExportResponse>(200, 'POST', '/api/v1/bulk-exports', {
      ...exportBody,
      end_time: '2026-10-01T06:00:00Z',
    });
    const pendingExport = (await send<ExportResponse>(200, 'GET', `/api/v1/bulk-exports/${pending.body.id}`)).body;
    await send(204, 'DELETE', `/v2/deployments/${deleted}`);
    const revisions = new Map<string, RevisionResponse[]>();
    for (const id of [patched, revised])
      revisions.set(id, (await send<RevisionsList>(200, 'GET', `/v2/deployments/${id}/revisions`)).body.resources);
    // Listed right after the delete, before the clock moves: the deleted one is AWAITING_DELETE.
    const deployments = (await send<DeploymentsList>(200, 'GET', '/v2/deployments?limit=100')).body.resources;
    await upstream.clock.advance(600);
    await send(404, 'GET', `/v2/deployments/${deleted}`);

    return {
      workspace,
      earlierDestinationId,
      destination: destination.body,
      completedExport,
      pendingExport,
      listener,
      provider: provider.body,
      deployments,
      deletedDeploymentId: deleted,
      revisions,
      secondsPassed: (upstream.clock.now() - startedAt) / 1_000_000,
      secrets: [
        workspace.api_key,
        RECORDED_OBJSTORE_KEY.secret_access_key,
        full.secret_access_key,
        rotated.secret_access_key,
        DEPLOYMENT_SECRET,
        CLIENT_SECRET,
        SCRATCH_CLIENT_SECRET,
      ],
      unexpected,
    };
  } finally {
    await recorder.stop();
  }
}
