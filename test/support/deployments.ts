import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededDeploymentFamily, type SeededDeploymentFamily } from '../../src/deployments/fixtures.ts';
import { loadFixtures } from '../../src/fixtures/files.ts';
import { DEFAULT_FIXTURES_DIR } from '../../src/localplane.ts';
import type { FixtureWorkspace } from './instance.ts';

/** The fixture file fixtures/deployments.json, as loaded. */
export const deploymentFixtures = () => loadFixtures(DEFAULT_FIXTURES_DIR).deployments;

/** The seeded deployment family of each workspace, regenerated: the source the API must match. */
export function seededFamilies(seed = 1): Map<string, SeededDeploymentFamily> {
  return new Map(
    deploymentFixtures().workspaces.map((workspace) => [
      workspace.workspace_id,
      seededDeploymentFamily(workspace, seed),
    ]),
  );
}

export interface CodehostBodyOverrides {
  source_config?: Record<string, unknown>;
  source_revision_config?: Record<string, unknown>;
  secrets?: { name: string; value: string }[];
  /** Top-level fields added or replaced. */
  top?: Record<string, unknown>;
}

/** A valid codehost create body (E9) for the workspace's first integration and repository. */
export function codehostDeploymentBody(
  workspace: FixtureWorkspace,
  name: string,
  overrides: CodehostBodyOverrides = {},
) {
  const integration = workspace.integrations[0]!;
  const repo = integration.repos[0]!;
  return {
    name,
    source: 'codehost',
    source_config: {
      integration_id: integration.id,
      repo_url: repo.url,
      deployment_type: 'dev',
      ...overrides.source_config,
    },
    source_revision_config: {
      repo_ref: repo.default_branch,
      graph_config_path: 'graph.json',
      ...overrides.source_revision_config,
    },
    secrets: overrides.secrets ?? [],
    ...overrides.top,
  };
}

/** What the hosted CLI polls a revision for (its _TERMINAL_STATUSES). */
export const TERMINAL_STATUSES = ['DEPLOYED', 'CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'SKIPPED'];

/** A real gzipped tar of a tiny graph project, as the CLI's create_archive makes. */
export function projectTarball(): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'localplane-deploy-flow-'));
  try {
    writeFileSync(
      join(dir, 'graph.json'),
      JSON.stringify({ graphs: { agent: './agent.py:graph' }, dependencies: ['.'] }),
    );
    writeFileSync(join(dir, 'agent.py'), 'graph = None\n');
    const archive = join(dir, 'source.tgz');
    const tar = spawnSync('tar', ['-czf', archive, '-C', dir, 'graph.json', 'agent.py']);
    if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr}`);
    return readFileSync(archive);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The CLI's _upload_to_gcs: a PUT of the file to the signed URL with its headers (no retry: a failure ends the
 * command).
 */
export const putTarball = (url: string, tarball: Buffer) =>
  fetch(url, {
    method: 'PUT',
    body: new Uint8Array(tarball),
    headers: {
      'Content-Type': 'application/gzip',
      'Content-Length': String(tarball.length),
      'X-Goog-Content-Length-Range': '0,209715200',
    },
  });

type Secrets = { name: string; value: string }[];

/** The CLI's create body when no deployment has the name: no revision config yet, the secrets from its env. */
export const cliCreateBody = (name: string, source: 'internal_source' | 'internal_container', secrets: Secrets) => ({
  name,
  source,
  source_config: { deployment_type: 'dev' },
  source_revision_config: {},
  secrets,
});

/** The CLI's PATCH after a tarball upload (update_deployment_internal_source): a revision built from it. */
export const cliRemoteBuildPatch = (objectPath: string, secrets: Secrets, installCommand?: string) => ({
  revision_source: 'internal_source',
  source_revision_config: { source_tarball_path: objectPath, graph_config_path: 'graph.json' },
  ...(installCommand === undefined ? {} : { source_config: { install_command: installCommand } }),
  secrets,
  tracked_packages: ['graph:1.0.0'],
});
