import { randomBytes } from 'node:crypto';
import type { ObjstoreClients, ObjstoreError, ObjstoreConnection } from '../destinations/clients.ts';
import { NodeSha256 } from '../shared/node-sha256.ts';
import type { ObjstoreKey } from '../objstore/types.ts';
import { badRequest } from '../shared/errors.ts';
import { UUID_SOURCE, type IdGenerator } from '../shared/ids.ts';
import type { UploadUrl } from './schemas.ts';

/**
 * The objstore bucket that holds the source tarballs of remote builds, one folder per
 * workspace: `<workspace_id>/<deployment_id>/<upload id>.tar.gz`. It is one of the instance's
 * configured buckets (reset empty, in snapshots and the plain-file view) but in no fixture.
 */
export const SOURCE_TARBALL_BUCKET = 'localplane-deployment-sources';

/** How long an upload URL stays valid: the objstore checks presigned URLs against wall time. */
const UPLOAD_URL_SECONDS = 3600;

/**
 * The key pair upload URLs are signed with: the instance's own, with a secret that never
 * leaves the process (and so is in no response, log or listing). A presigned URL lets its
 * holder make exactly the request signed, a PUT of one key, and nothing else.
 */
export function sourceUploadKey(): ObjstoreKey {
  return {
    accessKeyId: 'LPDEPLOYMENTSOURCES0',
    secretAccessKey: randomBytes(30).toString('base64url'),
    permissions: ['create', 'get'],
  };
}

export interface SourceUploadDeps {
  key: ObjstoreKey;
  ids: IdGenerator;
  objstoreClients: ObjstoreClients;
  /** The embedded objstore's URL; binds its port on first use. */
  objstoreEndpoint: () => Promise<string>;
}

// The ids this emulator issues, in lower case as it writes them.
const UUID = new RegExp(`^${UUID_SOURCE}$`);
const TARBALL_NAME = new RegExp(`^${UUID_SOURCE}\\.tar\\.gz$`);

const notUploaded = (path: string) =>
  badRequest(
    `Source configuration error: source_tarball_path ${path} was never uploaded. Request an upload URL with POST ` +
      `/v2/deployments/{deployment_id}/upload-url, PUT the tarball to it, then pass its object_path.`,
  );

/** upload-url: presigned PUT URLs into the embedded objstore, and the check that a revision's tarball is there. */
export class SourceUploads {
  constructor(private readonly deps: SourceUploadDeps) {}

  /** A URL to PUT one tarball of the deployment to, and the object_path a revision then names. */
  async uploadUrl(tenantId: string, deploymentId: string): Promise<UploadUrl> {
    const objectPath = `${tenantId}/${deploymentId}/${this.deps.ids.uuid()}.tar.gz`;
    const endpoint = new URL(await this.deps.objstoreEndpoint());
    // Loaded here: no start needs the signer, and it costs tens of milliseconds to load.
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const signer = new SignatureV4({
      credentials: this.deps.key,
      region: 'us-east-1',
      service: 's3',
      sha256: NodeSha256,
      uriEscapePath: false,
    });
    const signed = await signer.presign(
      {
        method: 'PUT',
        protocol: endpoint.protocol,
        hostname: endpoint.hostname,
        port: Number(endpoint.port),
        path: `/${SOURCE_TARBALL_BUCKET}/${objectPath}`,
        query: {},
        headers: { host: endpoint.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
      },
      { expiresIn: UPLOAD_URL_SECONDS },
    );
    const query = new URLSearchParams(signed.query as Record<string, string>).toString().replaceAll('+', '%20');
    return { upload_url: `${endpoint.origin}${signed.path}?${query}`, object_path: objectPath };
  }

  /** Throws the 400 of a source_tarball_path that names no tarball uploaded for the workspace. */
  async checkUploaded(tenantId: string, path: string): Promise<void> {
    const [workspace, deployment, file, ...rest] = path.split('/');
    const issued =
      workspace === tenantId && UUID.test(deployment ?? '') && TARBALL_NAME.test(file ?? '') && rest.length === 0;
    if (!issued) throw notUploaded(path);
    const target: ObjstoreConnection = {
      endpoint: await this.deps.objstoreEndpoint(),
      region: 'us-east-1',
      credentials: this.deps.key,
    };
    try {
      await this.deps.objstoreClients.objectSize(target, SOURCE_TARBALL_BUCKET, path);
    } catch (error) {
      if (['NotFound', 'NoSuchKey'].includes((error as ObjstoreError).code)) throw notUploaded(path);
      throw error;
    }
  }
}
