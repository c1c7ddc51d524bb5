import { seededDeploymentFamily, type SeededDeploymentFamily } from '../../src/deployments/fixtures.ts';
import { loadFixtures } from '../../src/fixtures/files.ts';
import { DEFAULT_FIXTURES_DIR } from '../../src/localplane.ts';

/** The fixture file fixtures/deployments.json, as loaded. */
export const deploymentFixtures = () => loadFixtures(DEFAULT_FIXTURES_DIR).deployments;

/** The seeded deployment family of each workspace, regenerated: the source the API must match. */
export function seededFamilies(seed = 1): Map<string, SeededDeploymentFamily> {
  return new Map(deploymentFixtures().workspaces.map((workspace) => [workspace.workspace_id, seededDeploymentFamily(workspace, seed)]));
}
