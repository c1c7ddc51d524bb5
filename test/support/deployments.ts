import { seededDeploymentFamily, type SeededDeploymentFamily } from '../../src/deployments/fixtures.ts';
import { loadFixtures } from '../../src/fixtures/files.ts';
import { DEFAULT_FIXTURES_DIR } from '../../src/localplane.ts';
import type { FixtureWorkspace } from './instance.ts';

/** The fixture file fixtures/deployments.json, as loaded. */
export const deploymentFixtures = () => loadFixtures(DEFAULT_FIXTURES_DIR).deployments;

/** The seeded deployment family of each workspace, regenerated: the source the API must match. */
export function seededFamilies(seed = 1): Map<string, SeededDeploymentFamily> {
  return new Map(deploymentFixtures().workspaces.map((workspace) => [workspace.workspace_id, seededDeploymentFamily(workspace, seed)]));
}

export interface CodehostBodyOverrides {
  source_config?: Record<string, unknown>;
  source_revision_config?: Record<string, unknown>;
  secrets?: { name: string; value: string }[];
  /** Top-level fields added or replaced. */
  top?: Record<string, unknown>;
}

/** A valid codehost create body (E9) for the workspace's first integration and repository. */
export function codehostDeploymentBody(workspace: FixtureWorkspace, name: string, overrides: CodehostBodyOverrides = {}) {
  const integration = workspace.integrations[0]!;
  const repo = integration.repos[0]!;
  return {
    name,
    source: 'codehost',
    source_config: { integration_id: integration.id, repo_url: repo.url, deployment_type: 'dev', ...overrides.source_config },
    source_revision_config: { repo_ref: repo.default_branch, graph_config_path: 'graph.json', ...overrides.source_revision_config },
    secrets: overrides.secrets ?? [],
    ...overrides.top,
  };
}
