import { REVISION_STEP_STATUSES } from '../config.ts';
import type { Db } from '../shared/db.ts';
import { uuidFrom } from '../shared/ids.ts';
import { createRandom, pick, randomInt, seedFrom, type Random } from '../shared/prng.ts';
import { MICROS_PER_DAY, MICROS_PER_SECOND, parseTimestamp } from '../shared/time.ts';
import {
  DEPLOYMENT_TYPES,
  type DeploymentSource,
  type DeploymentStatus,
  type DeploymentType,
  type ResourceSpec,
  type RevisionStatus,
  type Secret,
  type SourceRevisionConfig,
  type StoredSourceConfig,
} from './schemas.ts';
import { TracingStore } from '../tracing/store.ts';
import type { DeploymentsFile, DeploymentWorkspaceFixture, ListedDeploymentFixture } from './fixture-file.ts';
import {
  DeploymentStore,
  type CodehostIntegrationRow,
  CodehostRepoRow,
  DeploymentRow,
  DeploymentTenantRow,
  ListenerRow,
  OAuthProviderRow,
  RevisionRow,
} from './store.ts';

/** A seeded deployment, its revisions (oldest first) and its tracing project. */
export interface SeededDeployment {
  row: DeploymentRow;
  revisions: RevisionRow[];
  tracingProjectId: string;
}

/** One workspace's seeded deployment family, as rows. */
export interface SeededDeploymentFamily {
  tenant: DeploymentTenantRow;
  providers: OAuthProviderRow[];
  integrations: CodehostIntegrationRow[];
  repos: CodehostRepoRow[];
  listeners: ListenerRow[];
  deployments: SeededDeployment[];
}

// Cycle lengths coprime to the source and type counts, so combinations vary.
const STATUS_CYCLE: readonly DeploymentStatus[] = [
  'READY',
  'AWAITING_DATABASE',
  'READY',
  'UNUSED',
  'READY',
  'AWAITING_DELETE',
  'UNKNOWN',
];
const IN_PROGRESS: readonly RevisionStatus[] = REVISION_STEP_STATUSES;
const ENDED_UNDEPLOYED: readonly RevisionStatus[] = ['CREATE_FAILED', 'BUILD_FAILED', 'DEPLOY_FAILED', 'SKIPPED'];
const SUPERSEDED: readonly RevisionStatus[] = [
  'DEPLOYED',
  'DEPLOYED',
  'INTERRUPTED',
  'BUILD_FAILED',
  'DEPLOY_FAILED',
  'SKIPPED',
  'UNKNOWN',
];
const SECRET_NAMES = ['OPENAI_API_KEY', 'DATABASE_URL', 'SLACK_BOT_TOKEN', 'SEARCH_API_KEY'];
const GRAPH_CONFIG_PATHS = ['graph.json', 'apps/agent/graph.json'];

const micros = (timestamp: string) => parseTimestamp(timestamp)!;
const flag = (value: boolean) => (value ? 1 : 0) as 0 | 1;
const hex = (random: Random, length: number) =>
  Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join('');
/** A seeded secret's value: never answered, made up here so that no fixture file holds one. */
const fixtureSecretValue = (random: Random) => `lp-fixture-secret-${hex(random, 24)}`;

function resourceSpecFor(type: DeploymentType | null): ResourceSpec | null {
  if (type === 'prod')
    return { min_scale: 2, max_scale: 10, cpu: 2, memory_mb: 4096, db_storage_gi: 20, labels: { tier: 'prod' } };
  if (type === 'dev') return { min_scale: 1, max_scale: 1, cpu: 1, memory_mb: 1024 };
  return null;
}

/**
 * The statuses of a deployment's revisions, oldest first, consistent with its status:
 * a deployment awaiting its database has one revision still on its way (or failed);
 * any other has deployed its first revision, and only the newest may be in progress.
 */
function revisionStatuses(status: DeploymentStatus, random: Random): RevisionStatus[] {
  if (status === 'AWAITING_DATABASE') return [pick(random, [...IN_PROGRESS, 'BUILD_FAILED'])];
  const count = randomInt(random, 1, 4);
  if (count === 1) return ['DEPLOYED'];
  const middle = Array.from({ length: count - 2 }, () => pick(random, SUPERSEDED));
  const roll = random();
  const newest = roll < 0.6 ? 'DEPLOYED' : roll < 0.8 ? pick(random, IN_PROGRESS) : pick(random, ENDED_UNDEPLOYED);
  return ['DEPLOYED', ...middle, newest];
}

/** Expands one workspace of fixtures/deployments.json into rows, deterministically for a seed. */
export function seededDeploymentFamily(fixture: DeploymentWorkspaceFixture, seed: number): SeededDeploymentFamily {
  const tenantId = fixture.workspace_id;
  const random = createRandom(seedFrom(seed, tenantId, 'deployments'));
  const integrations = fixture.codehost_integrations.map((integration, position) => ({
    id: integration.id,
    tenant_id: tenantId,
    installation_id: integration.installation_id,
    name: integration.name,
    position,
  }));
  const repos = fixture.codehost_integrations.flatMap((integration) =>
    integration.repos.map((repo, position) => ({ integration_id: integration.id, ...repo, position })),
  );
  const listeners = fixture.listeners.map((listener): ListenerRow => ({
    id: listener.id,
    tenant_id: tenantId,
    compute_type: 'k8s',
    compute_id: listener.compute_id,
    compute_config: JSON.stringify({ k8s_namespaces: listener.k8s_namespaces }),
    version: listener.version,
    created_at: micros(listener.created_at),
    updated_at: micros(listener.updated_at ?? listener.created_at),
  }));
  const providers = fixture.oauth_providers.map((provider) => ({
    id: provider.id,
    tenant_id: tenantId,
    organization_id: fixture.organization_id,
    provider_id: provider.provider_id,
    name: provider.name,
    client_id: provider.client_id,
    client_secret: null,
    auth_url: provider.auth_url,
    token_url: provider.token_url,
    uses_pkce: flag(provider.uses_pkce),
    code_challenge_method: provider.code_challenge_method,
    provider_type: provider.provider_type ?? null,
    mcp_server_url: provider.mcp_server_url ?? null,
    token_endpoint_auth_method: provider.token_endpoint_auth_method ?? null,
    is_dynamic_client: provider.is_dynamic_client === undefined ? null : flag(provider.is_dynamic_client),
    created_at: micros(provider.created_at),
    updated_at: micros(provider.updated_at),
  }));

  const generated = fixture.deployments ? generatedDeployments(fixture, fixture.deployments, random, repos) : [];
  const listedRandom = createRandom(seedFrom(seed, tenantId, 'listed deployments'));
  const listed = fixture.listed_deployments.map((deployment) => listedDeployment(tenantId, deployment, listedRandom));

  return {
    tenant: { tenant_id: tenantId, organization_id: fixture.organization_id, self_hosted: flag(fixture.self_hosted) },
    providers,
    integrations,
    repos,
    listeners,
    deployments: [...generated, ...listed],
  };
}

/** The deployments of the compact spec, every source, type and status among them. */
function generatedDeployments(
  fixture: DeploymentWorkspaceFixture,
  spec: NonNullable<DeploymentWorkspaceFixture['deployments']>,
  random: Random,
  repos: readonly CodehostRepoRow[],
): SeededDeployment[] {
  const tenantId = fixture.workspace_id;
  const from = micros(spec.created_from);
  return Array.from({ length: spec.count }, (_, index): SeededDeployment => {
    const source = spec.sources[index % spec.sources.length]!;
    const deploymentType =
      source === 'external_container'
        ? null
        : DEPLOYMENT_TYPES[Math.floor(index / spec.sources.length) % DEPLOYMENT_TYPES.length]!;
    const status = STATUS_CYCLE[index % STATUS_CYCLE.length]!;
    const name = `${spec.names[index % spec.names.length]}-${String(index + 1).padStart(2, '0')}`;
    const id = uuidFrom(random);
    const createdAt = from + Math.floor(random() * spec.days * MICROS_PER_DAY);
    const sourceSetup = setUpSource(source, {
      random,
      name,
      tenantId,
      deploymentId: id,
      repos,
      listeners: fixture.listeners,
    });

    let revisionTime = createdAt;
    const revisions = revisionStatuses(status, random).map((revisionStatus, number): RevisionRow => {
      if (number > 0) revisionTime += randomInt(random, 2 * 3600, 9 * 24 * 3600) * MICROS_PER_SECOND;
      const finished = !IN_PROGRESS.includes(revisionStatus);
      return {
        id: uuidFrom(random),
        deployment_id: id,
        status: revisionStatus,
        source,
        source_revision_config: JSON.stringify(sourceSetup.revisionConfig(number + 1)),
        created_at: revisionTime,
        updated_at: revisionTime + randomInt(random, finished ? 180 : 5, finished ? 900 : 120) * MICROS_PER_SECOND,
      };
    });
    const newest = revisions.at(-1)!;
    const active = revisions.filter((revision) => revision.status === 'DEPLOYED').at(-1);
    const secrets: Secret[] = SECRET_NAMES.filter(() => random() < 0.4).map((secretName) => ({
      name: secretName,
      value: fixtureSecretValue(random),
    }));
    return {
      row: {
        id,
        tenant_id: tenantId,
        name,
        source,
        deployment_type: deploymentType,
        status,
        source_config: JSON.stringify({ ...sourceSetup.config, resource_spec: resourceSpecFor(deploymentType) }),
        secrets: JSON.stringify(secrets),
        secret_references:
          source === 'external_container'
            ? JSON.stringify([{ name: 'OPENAI_API_KEY', secret_name: `${name}-secrets`, secret_key: 'openai-api-key' }])
            : null,
        image_version: pick(random, spec.image_versions),
        tag_value_ids: JSON.stringify(spec.tag_value_ids.filter(() => random() < 0.35)),
        remote_reconciled: flag(random() < 0.35),
        latest_revision_id: newest.id,
        active_revision_id: active?.id ?? null,
        created_at: createdAt,
        updated_at: Math.max(...revisions.map((revision) => revision.updated_at)),
      },
      revisions,
      tracingProjectId: uuidFrom(random),
    };
  });
}

/** A deployment of the fixtures as it is listed, with its revisions; its secrets get made-up values. */
function listedDeployment(tenantId: string, deployment: ListedDeploymentFixture, random: Random): SeededDeployment {
  return {
    row: {
      id: deployment.id,
      tenant_id: tenantId,
      name: deployment.name,
      source: deployment.source,
      deployment_type: deployment.deployment_type,
      status: deployment.status,
      source_config: JSON.stringify(deployment.source_config),
      secrets: JSON.stringify(
        deployment.secrets.map(({ name }): Secret => ({ name, value: fixtureSecretValue(random) })),
      ),
      secret_references: deployment.secret_references === null ? null : JSON.stringify(deployment.secret_references),
      image_version: deployment.image_version,
      tag_value_ids: JSON.stringify(deployment.tag_value_ids),
      remote_reconciled: flag(deployment.remote_reconciled),
      latest_revision_id: deployment.latest_revision_id,
      active_revision_id: deployment.active_revision_id,
      created_at: micros(deployment.created_at),
      updated_at: micros(deployment.updated_at),
    },
    revisions: deployment.revisions.map((revision) => ({
      id: revision.id,
      deployment_id: deployment.id,
      status: revision.status,
      source: revision.source,
      source_revision_config: JSON.stringify(revision.source_revision_config),
      created_at: micros(revision.created_at),
      updated_at: micros(revision.updated_at),
    })),
    tracingProjectId: uuidFrom(random),
  };
}

interface SourceSetup {
  config: StoredSourceConfig;
  /** The source_revision_config of the deployment's n-th revision (1-based). */
  revisionConfig(number: number): SourceRevisionConfig;
}

/** Where a deployment's code comes from: its source_config and what each revision builds. */
function setUpSource(
  source: DeploymentSource,
  context: {
    random: Random;
    name: string;
    tenantId: string;
    deploymentId: string;
    repos: readonly CodehostRepoRow[];
    listeners: DeploymentWorkspaceFixture['listeners'];
  },
): SourceSetup {
  const { random, name } = context;
  const graphConfigPath = pick(random, GRAPH_CONFIG_PATHS);
  switch (source) {
    case 'codehost': {
      const repo = pick(random, context.repos);
      const onTags = random() < 0.25;
      const branch = random() < 0.7 ? repo.default_branch : 'feature/next';
      return {
        config: {
          integration_id: repo.integration_id,
          repo_url: repo.url,
          build_on_push: onTags ? false : random() < 0.6,
          custom_url: `https://${name}.graphs.localplane.test`,
          install_command: random() < 0.2 ? 'yarn install --frozen-lockfile' : null,
        },
        revisionConfig: (number) => ({
          repo_ref: onTags ? `refs/tags/v1.${number - 1}.0` : branch,
          graph_config_path: graphConfigPath,
          repo_commit_sha: hex(random, 40),
        }),
      };
    }
    case 'external_container': {
      const listener = pick(random, context.listeners);
      return {
        config: {
          listener_id: listener.id,
          listener_config: { k8s_namespace: pick(random, listener.k8s_namespaces) },
          custom_url: random() < 0.5 ? `https://${name}.graphs.internal.example` : null,
        },
        revisionConfig: (number) => ({ image_uri: `registry.example/graphs/${name}:1.${number - 1}.0` }),
      };
    }
    case 'internal_container':
      return {
        config: {},
        revisionConfig: (number) => ({ image_uri: `registry.localplane.test/${context.tenantId}/${name}:r${number}` }),
      };
    case 'internal_source':
      return {
        config: {},
        revisionConfig: (number) => ({
          graph_config_path: graphConfigPath,
          source_tarball_path: `uploads/${context.tenantId}/${context.deploymentId}/source-${number}.tar.gz`,
        }),
      };
    case 'internal_template':
      return { config: {}, revisionConfig: () => ({}) };
  }
}

/** Seeds a template with deployments.json: each workspace's family, each deployment with its tracing project. */
export function seedDeployments(db: Db, file: DeploymentsFile, seed: number): void {
  for (const workspace of file.workspaces) {
    const family = seededDeploymentFamily(workspace, seed);
    DeploymentStore.insert(db, 'deployment_tenants', family.tenant);
    for (const provider of family.providers) DeploymentStore.insert(db, 'oauth_providers', provider);
    for (const integration of family.integrations) DeploymentStore.insert(db, 'codehost_integrations', integration);
    for (const repo of family.repos) DeploymentStore.insert(db, 'codehost_repos', repo);
    for (const listener of family.listeners) DeploymentStore.insert(db, 'listeners', listener);
    for (const { row, revisions, tracingProjectId } of family.deployments) {
      DeploymentStore.insert(db, 'deployments', row);
      for (const revision of revisions) DeploymentStore.insert(db, 'deployment_revisions', revision);
      TracingStore.insertSession(db, {
        id: tracingProjectId,
        tenant_id: row.tenant_id,
        name: row.name,
        created_at: row.created_at,
      });
    }
  }
}
