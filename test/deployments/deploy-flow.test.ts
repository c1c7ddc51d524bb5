/**
 * The hosted CLI's deploy command against a real instance: its calls in its order, with the
 * bodies it sends and the fields it reads (push-token, upload-url and a real tarball PUT to the
 * presigned URL, revisions polled to a final status on the emulator clock, build and deploy
 * logs paged with next_offset), the SKIPPED and failing endings, and deletion with and without
 * AWAITING_DELETE.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import { SOURCE_TARBALL_BUCKET } from '../../src/deployments/source-uploads.ts';
import {
  cliCreateBody,
  cliRemoteBuildPatch,
  codehostDeploymentBody,
  projectTarball,
  putTarball,
  TERMINAL_STATUSES,
} from '../support/deployments.ts';
import type { LogsPage } from '../../src/deployments/schemas.ts';
import { useLocalplane, workspaceByTier, type ApiResponse, type FixtureWorkspace } from '../support/instance.ts';
import { getBytes, s3For } from '../support/objstore.ts';

const ctx = useLocalplane({ freezeClock: true });
const acme = () => workspaceByTier(ctx.fixtures, 'plus');
const globex = () => workspaceByTier(ctx.fixtures, 'enterprise');
/** A second workspace that is not self-hosted, so that it may build from source too. */
const initech = () => workspaceByTier(ctx.fixtures, 'developer');
const api = (workspace: FixtureWorkspace = acme()) => ctx.api.as(workspace);
const admin = (method: string, path: string, body?: unknown) =>
  ctx.admin.request(method, path, body === undefined ? {} : { body });
const advance = (seconds: number) => admin('POST', '/clock/advance', { seconds });
const SECRET_VALUE = 'lp-deploy-flow-secret-value';
const SECRETS = [{ name: 'OPENAI_API_KEY', value: SECRET_VALUE }];

beforeEach(async () => {
  await admin('POST', '/reset');
});

async function createDeployment(name: string, source: 'internal_source' | 'internal_container', workspace = acme()) {
  const created = await api(workspace).post('/v2/deployments', cliCreateBody(name, source, SECRETS));
  expect(created.status).toBe(201);
  return created.body;
}

/** upload-url, then the tarball PUT to it: the object_path the revision names. */
async function uploadSource(deploymentId: string, tarball = projectTarball(), workspace = acme()): Promise<string> {
  const upload = await api(workspace).post(`/v2/deployments/${deploymentId}/upload-url`);
  expect(upload.status).toBe(200);
  expect(Object.keys(upload.body).sort()).toEqual(['object_path', 'upload_url']);
  const put = await putTarball(upload.body.upload_url, tarball);
  expect(put.status).toBe(200);
  return upload.body.object_path;
}

interface Poll {
  status: string;
  seen: string[];
  buildLog: string[];
}

/**
 * The CLI's _poll_revision_status with --verbose: the latest revision polled once a second, build logs streamed with
 * next_offset.
 */
async function pollLatest(deploymentId: string, workspace = acme()): Promise<Poll & { revisionId: string }> {
  const latest = await api(workspace).get(`/v2/deployments/${deploymentId}/revisions?limit=1`);
  const revisionId: string = latest.body.resources[0].id;
  const seen: string[] = [];
  const buildLog: string[] = [];
  let offset: string | null = null;
  for (let second = 0; second <= 60; second++) {
    const revision = await api(workspace).get(`/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    const { status } = revision.body;
    if (seen.at(-1) !== status) seen.push(status);
    if (TERMINAL_STATUSES.includes(status)) return { revisionId, status, seen, buildLog };
    if (status === 'AWAITING_BUILD' || status === 'BUILDING') {
      const logs: ApiResponse = await api(workspace).post(
        `/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs`,
        { order: 'asc', limit: 50, ...(offset ? { offset } : {}) },
      );
      expect(logs.status).toBe(200);
      buildLog.push(...logs.body.logs.map((entry: { message: string }) => entry.message));
      offset = logs.body.next_offset ?? offset;
    }
    await advance(1);
  }
  throw new Error(`revision ${revisionId} still ${seen.at(-1)} after 60 s`);
}

const messages = (page: { logs: { message: string }[] }) => page.logs.map((entry) => entry.message);

describe('the hosted CLI deploy flow', () => {
  it(
    'remote build: looks up, creates, uploads a real tarball, makes a revision of it, polls to DEPLOYED, reads ' +
      'the logs, patches, deletes',
    async () => {
      const name = 'cli-remote-build';
      expect((await api().get(`/v2/deployments?name_contains=${name}`)).body.resources).toEqual([]);
      const created = await createDeployment(name, 'internal_source');
      expect(created.secrets).toEqual([{ name: 'OPENAI_API_KEY', value: '********' }]);
      const first = await pollLatest(created.id);
      expect(first.status).toBe('DEPLOYED');

      const tarball = projectTarball();
      const objectPath = await uploadSource(created.id, tarball);
      expect(objectPath).toMatch(new RegExp(`^${acme().id}/${created.id}/[0-9a-f-]{36}\\.tar\\.gz$`));
      // The tarball is really in the embedded objstore: read it back through the S3 API with a key of
      // the workspace (no other reaches its folder), and as a plain file.
      const workspaceKey = {
        access_key_id: 'LPDEPLOYFLOWACME01',
        secret_access_key: 'deploy-flow-acme-secret-0123456789',
        permissions: ['get'],
      };
      expect((await admin('POST', '/objstore/keys', { ...workspaceKey, workspace_id: acme().id })).status).toBe(201);
      const stored = await getBytes(
        s3For(ctx.fixtures.objstore.endpoint_url, workspaceKey),
        SOURCE_TARBALL_BUCKET,
        objectPath,
      );
      expect(Buffer.from(stored).equals(tarball)).toBe(true);
      expect(
        gunzipSync(readFileSync(join(ctx.fixtures.objstore.files_dir, SOURCE_TARBALL_BUCKET, objectPath))).toString(
          'latin1',
        ),
      ).toContain('graph = None');

      const revision = await api().post(`/v2/deployments/${created.id}/revisions`, {
        revision_source: 'internal_source',
        source_revision_config: { source_tarball_path: objectPath, graph_config_path: 'graph.json' },
        tracked_packages: ['graph:1.0.0'],
      });
      expect(revision.status).toBe(201);
      expect(revision.body).toMatchObject({
        status: 'CREATING',
        source: 'internal_source',
        source_revision_config: { source_tarball_path: objectPath, graph_config_path: 'graph.json' },
      });

      const polled = await pollLatest(created.id);
      expect(polled).toMatchObject({
        revisionId: revision.body.id,
        status: 'DEPLOYED',
        seen: ['CREATING', 'QUEUED', 'AWAITING_BUILD', 'BUILDING', 'AWAITING_DEPLOY', 'DEPLOYING', 'DEPLOYED'],
      });
      // Streamed while building, each line once, in order.
      expect(polled.buildLog).toEqual([
        `Creating revision ${revision.body.id} from source tarball ${objectPath}.`,
        'Queued for a build.',
        'Waiting for a builder.',
        `Fetching source tarball ${objectPath}.`,
        'Installing dependencies.',
        'Building the image from graph.json.',
      ]);
      const deployment = (await api().get(`/v2/deployments/${created.id}`)).body;
      expect(deployment).toMatchObject({
        status: 'READY',
        active_revision_id: revision.body.id,
        latest_revision_id: revision.body.id,
      });

      // `langgraph deploy logs --type build`: newest first, limit 100; timestamps are the emulator clock's.
      const buildLogs = await api().post(`/v1/projects/${created.id}/revisions/${revision.body.id}/build_logs`, {
        limit: 100,
        order: 'desc',
      });
      expect(messages(buildLogs.body)[0]).toBe('Build succeeded.');
      const createdAt = Date.parse(revision.body.created_at);
      expect(buildLogs.body.logs.at(-1)).toMatchObject({ level: 'INFO', timestamp: createdAt });
      expect(buildLogs.body.logs[0].timestamp).toBe(createdAt + 6000);
      const deployLogs = await api().post(`/v1/projects/${created.id}/revisions/${revision.body.id}/deploy_logs`, {
        order: 'asc',
      });
      expect(messages(deployLogs.body)).toEqual([
        'Waiting to deploy.',
        `Deploying revision ${revision.body.id}.`,
        'Starting the server.',
        'Running database migrations.',
        `Server is healthy: revision ${revision.body.id} is live.`,
      ]);
      const allDeployLogs = await api().post(`/v1/projects/${created.id}/deploy_logs`, { order: 'asc', limit: 1000 });
      expect(messages(allDeployLogs.body).filter((message) => message.startsWith('Server is healthy'))).toHaveLength(2);

      // The CLI's next deploy of the same name: found by name, a new upload, the PATCH it sends.
      const found = (await api().get(`/v2/deployments?name_contains=${name}`)).body.resources;
      expect(found.map((resource: { id: string }) => resource.id)).toEqual([created.id]);
      const secondPath = await uploadSource(created.id);
      const patched = await api().patch(
        `/v2/deployments/${created.id}`,
        cliRemoteBuildPatch(secondPath, SECRETS, 'yarn install'),
      );
      expect(patched.status).toBe(200);
      expect((await pollLatest(created.id)).status).toBe('DEPLOYED');

      expect((await api().delete(`/v2/deployments/${created.id}`)).status).toBe(204);
      expect((await api().get(`/v2/deployments/${created.id}`)).status).toBe(404);
      expect(ctx.logs.join('\n')).not.toContain(SECRET_VALUE);
    },
  );

  it('local build: a push token for an internal_container deployment, then the PATCH with the pushed image', async () => {
    const created = await createDeployment('cli-local-build', 'internal_container');
    const token = await api().post(`/v2/deployments/${created.id}/push-token`);
    expect(token.status).toBe(200);
    expect(token.body.token).toMatch(/^lp-push-[0-9a-f]{32}$/);
    // The CLI strips the scheme and takes the host for `docker login`, the rest for the repository.
    expect(token.body.registry_url).toBe(`https://registry.localplane.test/${acme().id}/${created.id}`);
    const now = Date.parse((await admin('GET', '/clock')).body.now);
    expect(Date.parse(token.body.expires_at)).toBe(now + 3600_000);

    const image = `registry.localplane.test/${acme().id}/${created.id}/cli-local-build@sha256:${'ab'.repeat(32)}`;
    const patched = await api().patch(`/v2/deployments/${created.id}`, {
      revision_source: 'internal_container',
      source_revision_config: { image_uri: image },
      secrets: [],
    });
    expect(patched.status).toBe(200);
    const polled = await pollLatest(created.id);
    expect(polled.status).toBe('DEPLOYED');
    const build = await api().post(`/v1/projects/${created.id}/revisions/${polled.revisionId}/build_logs`, {
      order: 'asc',
    });
    expect(messages(build.body)).toContain(`Using the pushed image ${image}: nothing to build.`);
  });

  it('refuses a push token for a deployment the CLI did not create (400 with the words the CLI looks for)', async () => {
    const codehost = (await api().post('/v2/deployments', codehostDeploymentBody(acme(), 'not-from-cli'))).body;
    const refused = await api().post(`/v2/deployments/${codehost.id}/push-token`);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toContain("only available for 'internal_container' source deployments");
  });
});

describe('POST /v2/deployments/{id}/revisions', () => {
  it('always creates a revision (201), which supersedes the one in progress (INTERRUPTED, told in its build log)', async () => {
    const created = await createDeployment('post-revisions', 'internal_source');
    await advance(2);
    const again = await api().post(`/v2/deployments/${created.id}/revisions`, {});
    expect(again.status).toBe(201);
    expect(again.body.status).toBe('CREATING');
    const first = (await api().get(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`)).body;
    expect(first.status).toBe('INTERRUPTED');
    const log = await api().post(`/v1/projects/${created.id}/revisions/${first.id}/build_logs`, {
      order: 'desc',
      limit: 1,
    });
    expect(log.body.logs[0]).toMatchObject({
      level: 'WARNING',
      message: 'Interrupted: a newer revision of the deployment superseded this one.',
    });
    expect((await api().get(`/v2/deployments/${created.id}`)).body.latest_revision_id).toBe(again.body.id);
    expect((await pollLatest(created.id)).status).toBe('DEPLOYED');
  });

  it(
    'refuses a source_tarball_path that was never uploaded, or was uploaded by another workspace (400), and ' +
      'changes nothing',
    async () => {
      const created = await createDeployment('tarball-check', 'internal_source');
      const before = (await api().get(`/v2/deployments/${created.id}/revisions`)).body.resources.length;
      const fictional = `${acme().id}/${created.id}/00000000-0000-4000-8000-000000000000.tar.gz`;
      for (const path of [fictional, 'uploads/source.tar.gz', '../../etc/passwd']) {
        const refused = await api().post(`/v2/deployments/${created.id}/revisions`, {
          revision_source: 'internal_source',
          source_revision_config: { source_tarball_path: path },
        });
        expect(refused.status).toBe(400);
        expect(refused.body.detail).toBe(
          `Source configuration error: source_tarball_path ${path} was never uploaded. Request an upload URL with ` +
            `POST /v2/deployments/{deployment_id}/upload-url, PUT the tarball to it, then pass its object_path.`,
        );
      }
      // Requested but never PUT: still not there.
      const unused = await api().post(`/v2/deployments/${created.id}/upload-url`);
      expect(
        (
          await api().patch(`/v2/deployments/${created.id}`, {
            source_revision_config: { source_tarball_path: unused.body.object_path },
          })
        ).status,
      ).toBe(400);
      const foreign = await createDeployment('tarball-foreign', 'internal_source', initech());
      const foreignPath = await uploadSource(foreign.id, projectTarball(), initech());
      expect(
        (
          await api().post(`/v2/deployments/${created.id}/revisions`, {
            source_revision_config: { source_tarball_path: foreignPath },
          })
        ).status,
      ).toBe(400);
      expect((await api().get(`/v2/deployments/${created.id}/revisions`)).body.resources).toHaveLength(before);
    },
  );

  it('validates its body (422) and is 404 for an unknown or foreign deployment', async () => {
    const created = await createDeployment('revisions-bad-input', 'internal_source');
    const bad = await api().post(`/v2/deployments/${created.id}/revisions`, {
      revision_source: 'somewhere',
      secrets: [{ name: 'K', value: 7 }],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((detail: { loc: unknown[] }) => detail.loc)).toEqual(
      expect.arrayContaining([['body', 'revision_source']]),
    );
    expect((await api().post('/v2/deployments/not-a-uuid/revisions', {})).status).toBe(422);
    const other = await createDeployment('revisions-foreign', 'internal_source', initech());
    for (const path of ['revisions', 'push-token', 'upload-url']) {
      const response = await api().post(`/v2/deployments/${other.id}/${path}`, {});
      expect(response.status).toBe(404);
      expect(response.body.detail).toBe(`Deployment ID ${other.id} not found.`);
    }
    const otherRevision = other.latest_revision_id;
    for (const stream of ['build_logs', 'deploy_logs']) {
      expect((await api().post(`/v1/projects/${other.id}/revisions/${otherRevision}/${stream}`, {})).status).toBe(404);
    }
    expect((await api().post(`/v1/projects/${other.id}/deploy_logs`, {})).status).toBe(404);
  });

  it('never echoes the secrets it is given', async () => {
    const created = await createDeployment('revisions-secrets', 'internal_source');
    const revision = await api().post(`/v2/deployments/${created.id}/revisions`, {
      secrets: [{ name: 'TOKEN', value: SECRET_VALUE }],
    });
    expect(revision.status).toBe(201);
    expect(revision.text).not.toContain(SECRET_VALUE);
    const deployment = await api().get(`/v2/deployments/${created.id}`);
    expect(deployment.body.secrets).toEqual([{ name: 'TOKEN', value: '********' }]);
    const refused = await api().post(`/v2/deployments/${created.id}/revisions`, {
      secrets: [{ name: 'TOKEN', value: SECRET_VALUE, extra: [SECRET_VALUE] }],
      revision_source: 7,
    });
    expect(refused.status).toBe(422);
    expect(refused.text).not.toContain(SECRET_VALUE);
    expect(ctx.logs.join('\n')).not.toContain(SECRET_VALUE);
  });
});

describe('upload URLs', () => {
  it('let their holder PUT that one key, nothing else', async () => {
    const created = await createDeployment('upload-url-scope', 'internal_source');
    const { upload_url: url, object_path: path } = (await api().post(`/v2/deployments/${created.id}/upload-url`)).body;
    const elsewhere = url.replace(path, `${acme().id}/${created.id}/other.tar.gz`);
    expect((await putTarball(elsewhere, projectTarball())).status).toBe(403);
    expect((await fetch(url)).status).toBe(403);
    expect((await putTarball(url, projectTarball())).status).toBe(200);
    // The objstore's journal masks the signature of the PUT.
    const put = (await admin('GET', '/requests?source=objstore&method=PUT&status=2xx')).body.requests[0];
    expect(put.query['X-Amz-Signature']).toBe('********');
  });

  it('are refused for an external_container deployment (400)', async () => {
    const workspace = globex();
    const created = await api(workspace).post('/v2/deployments', {
      name: 'external-upload',
      source: 'external_container',
      source_config: { listener_id: workspace.listeners[0], listener_config: { k8s_namespace: 'default' } },
      source_revision_config: { image_uri: 'registry.example/agent:1' },
      secrets: [],
    });
    expect(created.status).toBe(201);
    const refused = await api(workspace).post(`/v2/deployments/${created.body.id}/upload-url`);
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe("upload url is not available for 'external_container' source deployments");
  });
});

describe('failures, SKIPPED and their log lines', () => {
  it('BUILD_FAILED ends the build log with the knob message, as the CLI shows its last lines', async () => {
    const created = await createDeployment('build-fails', 'internal_source');
    await pollLatest(created.id);
    await admin('POST', '/faults/revisions', {
      stage: 'build',
      deployment_id: created.id,
      message: 'ERROR: No matching distribution found for graph-sdk==9.9',
    });
    const path = await uploadSource(created.id);
    await api().post(`/v2/deployments/${created.id}/revisions`, {
      revision_source: 'internal_source',
      source_revision_config: { source_tarball_path: path },
    });
    const polled = await pollLatest(created.id);
    expect(polled.status).toBe('BUILD_FAILED');
    const last = await api().post(`/v1/projects/${created.id}/revisions/${polled.revisionId}/build_logs`, {
      order: 'desc',
      limit: 30,
    });
    expect(last.body.logs[0]).toMatchObject({
      level: 'ERROR',
      message: 'ERROR: No matching distribution found for graph-sdk==9.9',
    });
    const errors = await api().post(`/v1/projects/${created.id}/revisions/${polled.revisionId}/build_logs`, {
      level: 'ERROR',
    });
    expect(errors.body.logs).toHaveLength(1);
    expect(
      (await api().post(`/v1/projects/${created.id}/revisions/${polled.revisionId}/deploy_logs`, {})).body.logs,
    ).toEqual([]);
  });

  it.each([
    ['create', 'CREATE_FAILED', 'build_logs', 'Revision creation failed: the deployment could not be provisioned.'],
    ['deploy', 'DEPLOY_FAILED', 'deploy_logs', 'Deploy failed: the server did not become healthy in time.'],
  ])('a %s failure ends %s with its stock line in %s', async (stage, status, stream, line) => {
    const created = await createDeployment(`fails-${stage}`, 'internal_source');
    await admin('POST', '/faults/revisions', { stage, deployment_id: created.id });
    await api().post(`/v2/deployments/${created.id}/revisions`, {});
    const polled = await pollLatest(created.id);
    expect(polled.status).toBe(status);
    const log = await api().post(`/v1/projects/${created.id}/revisions/${polled.revisionId}/${stream}`, {
      order: 'desc',
      limit: 1,
    });
    expect(log.body.logs[0]).toMatchObject({ level: 'ERROR', message: line });
  });

  it('SKIPPED is final after QUEUED, never active: the previous active revision stays', async () => {
    const created = await createDeployment('skipped-revision', 'internal_source');
    const first = await pollLatest(created.id);
    expect(first.status).toBe('DEPLOYED');
    await admin('POST', '/faults/revisions', { stage: 'skip', deployment_id: created.id });
    const skipped = await api().post(`/v2/deployments/${created.id}/revisions`, {});
    const polled = await pollLatest(created.id);
    expect(polled).toMatchObject({
      revisionId: skipped.body.id,
      status: 'SKIPPED',
      seen: ['CREATING', 'QUEUED', 'SKIPPED'],
    });
    await advance(30);
    expect((await api().get(`/v2/deployments/${created.id}/revisions/${skipped.body.id}`)).body.status).toBe('SKIPPED');
    expect((await api().get(`/v2/deployments/${created.id}`)).body).toMatchObject({
      active_revision_id: first.revisionId,
      latest_revision_id: skipped.body.id,
      status: 'READY',
    });
    const log = await api().post(`/v1/projects/${created.id}/revisions/${skipped.body.id}/build_logs`, {
      order: 'desc',
      limit: 1,
    });
    expect(log.body.logs[0].level).toBe('WARNING');
    expect(log.body.logs[0].message).toMatch(/^Revision skipped/);
    expect((await admin('GET', '/faults')).body.revisions).toEqual([]);
  });
});

describe('logs paging', () => {
  it('pages with next_offset in both orders, filters by text and time, and refuses a bad offset (400) or body (422)', async () => {
    const created = await createDeployment('logs-paging', 'internal_source');
    const { revisionId } = await pollLatest(created.id);
    const path = `/v1/projects/${created.id}/revisions/${revisionId}/build_logs`;
    const all = (await api().post(path, { order: 'asc', limit: 1000 })).body.logs;
    expect(all.length).toBeGreaterThan(4);
    expect(new Set(all.map((entry: { id: string }) => entry.id)).size).toBe(all.length);
    for (const order of ['asc', 'desc'] as const) {
      const read: string[] = [];
      let offset: string | null = null;
      for (;;) {
        const page: LogsPage = (await api().post(path, { order, limit: 2, offset })).body;
        if (page.logs.length === 0) {
          expect(page.next_offset).toBe(offset);
          break;
        }
        read.push(...page.logs.map((entry: { id: string }) => entry.id));
        offset = page.next_offset;
      }
      const expected = all.map((entry: { id: string }) => entry.id);
      expect(read).toEqual(order === 'asc' ? expected : expected.reverse());
    }
    expect(messages((await api().post(path, { query: 'BUILDER' })).body)).toEqual(['Waiting for a builder.']);
    const start = new Date(all.at(-1).timestamp).toISOString();
    expect(
      (await api().post(path, { start_time: start })).body.logs.every(
        (entry: { timestamp: number }) => entry.timestamp >= all.at(-1).timestamp,
      ),
    ).toBe(true);
    expect((await api().post(path, { end_time: new Date(all[0].timestamp).toISOString() })).body.logs).toEqual([]);
    expect((await api().post(path)).status).toBe(200);

    const badOffset = await api().post(path, { offset: 'nope' });
    expect(badOffset.status).toBe(400);
    expect(badOffset.body.detail).toBe('Invalid offset: nope is not a next_offset of this log.');
    for (const body of [
      { limit: 0 },
      { order: 'sideways' },
      { level: 'LOUD' },
      { start_time: 'yesterday' },
      { limit: 'ten' },
    ]) {
      const refused = await api().post(path, body);
      expect(refused.status, JSON.stringify(body)).toBe(422);
    }
    expect(
      (await api().post(`/v1/projects/${created.id}/revisions/00000000-0000-4000-8000-000000000000/build_logs`, {}))
        .status,
    ).toBe(404);
  });
});

describe('logs of seeded revisions', () => {
  it('tell the statuses a seeded revision had reached, at its creation and last update', async () => {
    let checked = 0;
    for (const { id: deploymentId } of acme().deployments) {
      const revisions = (await api().get(`/v2/deployments/${deploymentId}/revisions?status=DEPLOYED`)).body.resources;
      for (const revision of revisions) {
        checked++;
        const deploy = (
          await api().post(`/v1/projects/${deploymentId}/revisions/${revision.id}/deploy_logs`, {
            order: 'desc',
            limit: 1,
          })
        ).body.logs;
        expect(deploy[0]).toMatchObject({
          message: `Server is healthy: revision ${revision.id} is live.`,
          timestamp: Date.parse(revision.updated_at),
        });
        const build = (
          await api().post(`/v1/projects/${deploymentId}/revisions/${revision.id}/build_logs`, {
            order: 'asc',
            limit: 1,
          })
        ).body.logs;
        expect(build[0]).toMatchObject({ level: 'INFO', timestamp: Date.parse(revision.created_at) });
        expect(build[0].message).toMatch(new RegExp(`^Creating revision ${revision.id} from `));
      }
    }
    expect(checked).toBeGreaterThan(0);
  });
});

describe('deletion', () => {
  it('is instant by default', async () => {
    const created = await createDeployment('delete-instant', 'internal_source');
    expect((await api().delete(`/v2/deployments/${created.id}`)).status).toBe(204);
    expect((await api().get(`/v2/deployments/${created.id}`)).status).toBe(404);
  });

  it('with deployment_deletion_seconds: AWAITING_DELETE for that long on the emulator clock, then 404', async () => {
    await admin('PATCH', '/config', { deployment_deletion_seconds: 30 });
    const created = await createDeployment('delete-awaiting', 'internal_source');
    await advance(2);
    expect((await api().delete(`/v2/deployments/${created.id}`)).status).toBe(204);

    const awaiting = await api().get(`/v2/deployments/${created.id}`);
    expect(awaiting.body.status).toBe('AWAITING_DELETE');
    expect(
      (await api().get('/v2/deployments?name_contains=delete-awaiting')).body.resources.map(
        (resource: { status: string }) => resource.status,
      ),
    ).toEqual(['AWAITING_DELETE']);
    expect((await api().get(`/v2/deployments/${created.id}/revisions/${created.latest_revision_id}`)).body.status).toBe(
      'INTERRUPTED',
    );
    for (const [method, path, body] of [
      ['PATCH', '', { source_config: { build_on_push: false } }],
      ['POST', '/revisions', {}],
      ['POST', '/upload-url', undefined],
      ['POST', `/revisions/${created.latest_revision_id}/redeploy`, undefined],
    ] as const) {
      const refused = await api().request(method, `/v2/deployments/${created.id}${path}`, { body });
      expect(refused.status, `${method} ${path}`).toBe(409);
      expect(refused.body.detail).toBe(`Deployment ID ${created.id} is being deleted.`);
    }
    // A second DELETE changes nothing; the logs stay readable meanwhile.
    await advance(20);
    expect((await api().delete(`/v2/deployments/${created.id}`)).status).toBe(204);
    expect((await api().post(`/v1/projects/${created.id}/deploy_logs`, {})).status).toBe(200);
    await advance(9.5);
    expect((await api().get(`/v2/deployments/${created.id}`)).body.status).toBe('AWAITING_DELETE');
    await advance(0.5);
    expect((await api().get(`/v2/deployments/${created.id}`)).status).toBe(404);
    expect((await api().get('/v2/deployments?name_contains=delete-awaiting')).body.resources).toEqual([]);
  });

  it('a snapshot keeps the uploaded tarballs and the pending deletions; a restore brings both back', async () => {
    await admin('PATCH', '/config', { deployment_deletion_seconds: 30 });
    const created = await createDeployment('snapshot-sources', 'internal_source');
    const path = await uploadSource(created.id);
    const doomed = await createDeployment('snapshot-doomed', 'internal_source');
    expect((await api().delete(`/v2/deployments/${doomed.id}`)).status).toBe(204);
    const dir = mkdtempSync(join(tmpdir(), 'localplane-deploy-snapshot-'));
    try {
      await ctx.instance.snapshot(join(dir, 'state.snapshot'));
      await admin('POST', '/reset');
      expect((await api().get(`/v2/deployments/${created.id}`)).status).toBe(404);
      await ctx.instance.restore(join(dir, 'state.snapshot'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const revision = await api().post(`/v2/deployments/${created.id}/revisions`, {
      revision_source: 'internal_source',
      source_revision_config: { source_tarball_path: path },
    });
    expect(revision.status).toBe(201);
    expect((await api().get(`/v2/deployments/${doomed.id}`)).body.status).toBe('AWAITING_DELETE');
    await advance(30);
    expect((await api().get(`/v2/deployments/${doomed.id}`)).status).toBe(404);
  });

  it('a reset, also of the one workspace, drops a pending deletion with the rest', async () => {
    await admin('PATCH', '/config', { deployment_deletion_seconds: 30 });
    const created = await createDeployment('delete-reset', 'internal_source');
    await api().delete(`/v2/deployments/${created.id}`);
    expect((await admin('GET', '/tasks')).body.map((task: { label: string }) => task.label)).toContain(
      `deletion of deployment ${created.id}`,
    );
    await admin('POST', '/reset', { workspace_id: acme().id });
    expect((await admin('GET', '/tasks')).body.map((task: { label: string }) => task.label)).not.toContain(
      `deletion of deployment ${created.id}`,
    );
    expect((await api().get(`/v2/deployments/${created.id}`)).status).toBe(404);
    await admin('POST', '/reset');
    expect((await admin('GET', '/config')).body.deployment_deletion_seconds).toBe(0);
  });
});
