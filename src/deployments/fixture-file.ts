import { z } from 'zod';
import { fixtureTimestamp, MAX_LISTED, refineUniqueIds } from '../shared/fixture-files.ts';
import {
  DEPLOYMENT_SOURCES,
  DEPLOYMENT_STATUSES,
  DEPLOYMENT_TYPES,
  REVISION_STATUSES,
  secretReference,
  sourceConfig,
  sourceRevisionConfig,
} from './schemas.ts';

/** The most revisions one listed deployment has. */
const MAX_REVISIONS = 1_000;

export const oauthProviderFixture = z.object({
  id: z.string().min(1),
  provider_id: z.string().min(1),
  name: z.string().min(1),
  client_id: z.string().min(1),
  auth_url: z.url(),
  token_url: z.url(),
  uses_pkce: z.boolean(),
  code_challenge_method: z.string().nullable(),
  provider_type: z.string().nullable().optional(),
  mcp_server_url: z.url().nullable().optional(),
  /** Omitted: the default `client_secret_post` applies. */
  token_endpoint_auth_method: z.string().optional(),
  /** Omitted: the default false applies. */
  is_dynamic_client: z.boolean().optional(),
  created_at: fixtureTimestamp,
  updated_at: fixtureTimestamp,
});

export const codehostIntegrationFixture = z.object({
  id: z.guid(),
  installation_id: z.int(),
  name: z.string().min(1),
  repos: z.array(
    z.object({
      id: z.int(),
      name: z.string().min(1),
      owner: z.string().min(1),
      url: z.url(),
      default_branch: z.string().min(1),
    }),
  ),
});

export const listenerFixture = z.object({
  id: z.guid(),
  compute_id: z.string().min(1),
  k8s_namespaces: z.array(z.string().min(1)).min(1),
  version: z.string().nullable(),
  created_at: fixtureTimestamp,
  /** Omitted: created_at. */
  updated_at: fixtureTimestamp.optional(),
});

/** Deployments are generated from this (see src/deployments/fixtures.ts): every source, type and status is covered. */
const generatedDeploymentsFixture = z.object({
  count: z.int().min(0),
  /** Name stems; a deployment is called `<stem>-<nn>`. */
  names: z.array(z.string().regex(/^[a-z0-9-]+$/)).min(1),
  sources: z.array(z.enum(DEPLOYMENT_SOURCES)).min(1),
  created_from: fixtureTimestamp,
  days: z.int().min(1),
  image_versions: z.array(z.string().min(1)).min(1),
  tag_value_ids: z.array(z.guid()),
});

const listedRevisionFixture = z.object({
  id: z.guid(),
  status: z.enum(REVISION_STATUSES),
  source: z.enum(DEPLOYMENT_SOURCES),
  source_revision_config: sourceRevisionConfig,
  created_at: fixtureTimestamp,
  updated_at: fixtureTimestamp,
});

/**
 * A deployment as it is, with its revisions: its secrets by name only (their values are made up when the template is
 * built).
 */
export const listedDeploymentFixture = z
  .object({
    id: z.guid(),
    name: z.string().min(1).max(255),
    source: z.enum(DEPLOYMENT_SOURCES),
    deployment_type: z.enum(DEPLOYMENT_TYPES).nullable(),
    status: z.enum(DEPLOYMENT_STATUSES),
    source_config: sourceConfig.omit({ deployment_type: true }),
    secrets: z.array(z.strictObject({ name: z.string().min(1) })).max(100),
    secret_references: z.array(secretReference).max(100).nullable().default(null),
    image_version: z.string().nullable().default(null),
    tag_value_ids: z.array(z.guid()).max(100).default([]),
    remote_reconciled: z.boolean().default(false),
    latest_revision_id: z.guid().nullable(),
    active_revision_id: z.guid().nullable(),
    created_at: fixtureTimestamp,
    updated_at: fixtureTimestamp,
    revisions: z.array(listedRevisionFixture).max(MAX_REVISIONS),
  })
  .superRefine((deployment, ctx) => {
    const revisionIds = new Set(deployment.revisions.map((revision) => revision.id));
    for (const field of ['latest_revision_id', 'active_revision_id'] as const) {
      const id = deployment[field];
      if (id !== null && !revisionIds.has(id))
        ctx.addIssue({ code: 'custom', message: `${id} is not one of this deployment's revisions`, path: [field] });
    }
  });
export type ListedDeploymentFixture = z.infer<typeof listedDeploymentFixture>;

const deploymentWorkspaceFixture = z
  .object({
    workspace_id: z.guid(),
    organization_id: z.guid(),
    self_hosted: z.boolean(),
    oauth_providers: z.array(oauthProviderFixture),
    codehost_integrations: z.array(codehostIntegrationFixture),
    listeners: z.array(listenerFixture),
    /** Omitted: none are generated. */
    deployments: generatedDeploymentsFixture.optional(),
    listed_deployments: z.array(listedDeploymentFixture).max(MAX_LISTED).default([]),
  })
  .superRefine((workspace, ctx) => {
    const sources = workspace.deployments?.sources ?? [];
    if (sources.includes('external_container') && !(workspace.self_hosted && workspace.listeners.length > 0)) {
      ctx.addIssue({
        code: 'custom',
        message: 'external_container deployments need a self-hosted workspace with listeners',
        path: ['deployments'],
      });
    }
    if (
      sources.includes('codehost') &&
      !workspace.codehost_integrations.some((integration) => integration.repos.length > 0)
    ) {
      ctx.addIssue({
        code: 'custom',
        message: 'codehost deployments need a codehost integration with repositories',
        path: ['deployments'],
      });
    }
    const names = new Set<string>();
    workspace.listed_deployments.forEach((deployment, index) => {
      const path = ['listed_deployments', index];
      if (names.has(deployment.name))
        ctx.addIssue({
          code: 'custom',
          message: `a second deployment named ${deployment.name}`,
          path: [...path, 'name'],
        });
      names.add(deployment.name);
      if (deployment.source === 'external_container' && !workspace.self_hosted) {
        ctx.addIssue({
          code: 'custom',
          message: 'source external_container needs a self-hosted workspace',
          path: [...path, 'source'],
        });
      }
    });
  });
export type DeploymentWorkspaceFixture = z.infer<typeof deploymentWorkspaceFixture>;

/** deployments.json: per workspace, its OAuth providers, integrations, listeners and deployments. */
export const deploymentsFile = z.object({ workspaces: z.array(deploymentWorkspaceFixture) }).superRefine(
  refineUniqueIds('deployment or revision id', (file: { workspaces: DeploymentWorkspaceFixture[] }) =>
    file.workspaces.flatMap((workspace, w) =>
      workspace.listed_deployments.flatMap((deployment, d) => [
        { id: deployment.id, path: ['workspaces', w, 'listed_deployments', d, 'id'] },
        ...deployment.revisions.map((revision, r) => ({
          id: revision.id,
          path: ['workspaces', w, 'listed_deployments', d, 'revisions', r, 'id'],
        })),
      ]),
    ),
  ),
);
export type DeploymentsFile = z.infer<typeof deploymentsFile>;
