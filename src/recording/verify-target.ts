import { z } from 'zod';
import { withoutNodeVersionNotice } from '../destinations/clients.ts';
import { createEndpointResolver } from '../destinations/endpoints.ts';
import { isHarnessPath } from '../journal/matching.ts';
import { OBJSTORE_PERMISSIONS } from '../objstore/types.ts';
import { BULK_EXPORT_TIERS, type Tier } from '../workspaces/store.ts';

/** What verify was given cannot be used: a URL that is no localplane, a workspace it does not have. */
export class VerifyError extends Error {
  override name = 'VerifyError';
}

/** An instance of localplane verify starts for itself, answering in process. */
export interface ReplayInstance {
  fetch(request: Request): Promise<Response>;
  stop(): Promise<void>;
}

/** A request to the instance replayed into: a path with its query. */
export type SendToTarget = (path: string, init?: RequestInit) => Promise<Response>;

export const sendInProcess =
  (instance: ReplayInstance): SendToTarget =>
  (path, init) =>
    instance.fetch(new Request(`http://localhost${path}`, init));

export function sendOverHttp(url: string): SendToTarget {
  const base = url.replace(/\/+$/, '');
  return async (path, init) => {
    // A connection per request: the replay's own work between two requests (reading a large or deep answer) can last
    // longer than the instance keeps an idle connection open, and a reused one would be closed under the next request.
    const headers = new Headers(init?.headers);
    headers.set('connection', 'close');
    try {
      return await fetch(`${base}${path}`, { ...init, headers, redirect: 'manual' });
    } catch (error) {
      const cause = (error as Error & { cause?: Error }).cause;
      throw new VerifyError(`${url} cannot be reached: ${cause?.message ?? (error as Error).message}`);
    }
  };
}

const fixtureKey = z.object({
  access_key_id: z.string(),
  secret_access_key: z.string(),
  permissions: z.array(z.string()),
});
export type FixtureKey = z.infer<typeof fixtureKey>;

/** The parts of GET /_localplane/fixtures verify uses. */
const fixturesSchema = z.object({
  workspaces: z.array(
    z.object({
      id: z.string(),
      tier: z.string(),
      api_key: z.string(),
      sessions: z.array(z.object({ id: z.string() })),
      integrations: z.array(z.object({ id: z.string() })),
      listeners: z.array(z.string()),
      deployments: z.array(z.object({ id: z.string() })),
    }),
  ),
  objstore: z.object({
    endpoint_url: z.string(),
    buckets: z.array(z.string()),
    keys: z.array(fixtureKey),
    endpoint_aliases: z.array(z.string()),
  }),
});
export type TargetWorkspace = z.infer<typeof fixturesSchema>['workspaces'][number];

const EMBEDDED = 'embedded objstore';

/** The instance replayed into, as verify reads it before the first exchange. */
export interface Target {
  send: SendToTarget;
  frozenClock: boolean;
  workspaces: TargetWorkspace[];
  /** The ids of the fixtures, which a recording made against localplane shares with it. */
  fixtureIds: Set<string>;
  objstoreEndpoint: string;
  fixtureKeys: FixtureKey[];
  /** A fixture key pair with every permission, creating buckets included. */
  fullAccessKey: FixtureKey;
  /** Whether a path is one of the API's (not the harness's own, not a page asset). */
  isApiPath(path: string): boolean;
  /**
   * Whether a destination's endpoint_url is served by the embedded objstore (or is refused as a near miss of one of its
   * aliases).
   */
  servedByObjstore(endpointUrl: string): Promise<boolean>;
  /** Creates a bucket in the objstore unless it is there; what went wrong, if anything. */
  ensureBucket(name: string): Promise<string | null>;
}

async function readJson(send: SendToTarget, where: string, path: string): Promise<unknown> {
  const answer = await send(path);
  if (!answer.ok)
    throw new VerifyError(`${where} does not answer as a localplane: GET ${path} answered ${answer.status}`);
  return answer.json();
}

/** `/v2/deployments/{deployment_id}` as a pattern of paths. */
const pathPattern = (template: string) =>
  new RegExp(`^${template.replace(/[.+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}/]+\}/g, '[^/]+')}$`);

/** Reads the instance's fixtures, clock and API paths (from its OpenAPI document). */
export async function openTarget(send: SendToTarget, where: string): Promise<Target> {
  const fixtures = fixturesSchema.parse(await readJson(send, where, '/_localplane/fixtures'));
  const clock = z.object({ frozen: z.boolean() }).parse(await readJson(send, where, '/_localplane/clock'));
  const document = z
    .object({ paths: z.record(z.string(), z.unknown()) })
    .parse(await readJson(send, where, '/openapi.json'));
  const apiPaths = Object.keys(document.paths)
    .filter((path) => !isHarnessPath(path))
    .map(pathPattern);
  const fullAccessKey = fixtures.objstore.keys.find((key) =>
    OBJSTORE_PERMISSIONS.every((permission) => key.permissions.includes(permission)),
  );
  if (!fullAccessKey)
    throw new VerifyError(
      `${where} has no fixture objstore key with every permission (${OBJSTORE_PERMISSIONS.join(', ')}) for ` +
        `destination credentials`,
    );
  const resolveEndpoint = createEndpointResolver(async () => EMBEDDED, fixtures.objstore.endpoint_aliases);
  const buckets = new Set(fixtures.objstore.buckets);
  return {
    send,
    frozenClock: clock.frozen,
    workspaces: fixtures.workspaces,
    fixtureIds: new Set(
      fixtures.workspaces.flatMap((workspace) =>
        [
          workspace.id,
          ...workspace.listeners,
          ...[...workspace.sessions, ...workspace.integrations, ...workspace.deployments].map(({ id }) => id),
        ].map((id) => id.toLowerCase()),
      ),
    ),
    objstoreEndpoint: fixtures.objstore.endpoint_url,
    fixtureKeys: fixtures.objstore.keys,
    fullAccessKey,
    isApiPath: (path) => {
      const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
      return !isHarnessPath(trimmed) && apiPaths.some((pattern) => pattern.test(trimmed));
    },
    servedByObjstore: (endpointUrl) =>
      resolveEndpoint(endpointUrl).then(
        (resolved) => resolved === EMBEDDED,
        () => true,
      ),
    async ensureBucket(name) {
      if (buckets.has(name)) return null;
      buckets.add(name);
      return createBucket(fixtures.objstore.endpoint_url, fullAccessKey, name);
    },
  };
}

async function createBucket(endpoint: string, key: FixtureKey, name: string): Promise<string | null> {
  const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
  const client = withoutNodeVersionNotice(
    () =>
      new S3Client({
        endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        maxAttempts: 1,
        credentials: { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key },
      }),
  );
  try {
    await client.send(new CreateBucketCommand({ Bucket: name }));
    return null;
  } catch (error) {
    const code = (error as Error).name;
    return code === 'BucketAlreadyOwnedByYou' || code === 'BucketAlreadyExists'
      ? null
      : `bucket ${name} could not be created here: ${code}: ${(error as Error).message}`;
  } finally {
    client.destroy();
  }
}

/**
 * The fixture workspace a recorded workspace (X-Tenant-Id) stands for: the one asked for; else
 * the recorded one itself when the instance has it (a recording made against localplane); else
 * the first on a plan with bulk exports.
 */
export function workspaceChooser(
  workspaces: readonly TargetWorkspace[],
  requested: string | undefined,
): (recorded: string | undefined) => TargetWorkspace {
  const byId = (id: string | undefined) =>
    workspaces.find((workspace) => workspace.id.toLowerCase() === id?.toLowerCase());
  if (requested !== undefined) {
    const chosen = byId(requested);
    if (!chosen)
      throw new VerifyError(
        `workspace ${requested} is not a fixture workspace of the instance (it ` +
          `has ${workspaces.map(({ id }) => id).join(', ')})`,
      );
    return () => chosen;
  }
  const withBulkExports =
    workspaces.find((workspace) => BULK_EXPORT_TIERS.includes(workspace.tier as Tier)) ?? workspaces[0];
  if (!withBulkExports) throw new VerifyError('the instance has no fixture workspace');
  return (recorded) => byId(recorded) ?? withBulkExports;
}
