import { z } from 'zod';
import { REVISION_STEP_STATUSES } from '../config.ts';
import { requestTimestamp } from '../shared/validation.ts';
import { queryBoolean, queryInteger } from '../shared/validation.ts';

export const DEPLOYMENT_SOURCES = [
  'codehost',
  'external_container',
  'internal_container',
  'internal_source',
  'internal_template',
] as const;
export const DEPLOYMENT_TYPES = ['dev_free', 'dev', 'prod'] as const;
export const DEPLOYMENT_STATUSES = ['AWAITING_DATABASE', 'READY', 'UNUSED', 'AWAITING_DELETE', 'UNKNOWN'] as const;
export const REVISION_STATUSES = [
  ...REVISION_STEP_STATUSES,
  'CREATE_FAILED',
  'BUILD_FAILED',
  'DEPLOY_FAILED',
  'DEPLOYED',
  'SKIPPED',
  'INTERRUPTED',
  'UNKNOWN',
] as const;
export type DeploymentSource = (typeof DEPLOYMENT_SOURCES)[number];
export type DeploymentType = (typeof DEPLOYMENT_TYPES)[number];
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];
export type RevisionStatus = (typeof REVISION_STATUSES)[number];

/** What an OAuth provider record says when it was stored without these fields. */
export const DEFAULT_TOKEN_ENDPOINT_AUTH_METHOD = 'client_secret_post';

/** A nullable field that reads as null when absent, as the service's responses show every field. */
const optionalNull = <S extends z.ZodType>(schema: S) => schema.nullable().default(null);

const namedObject = z.looseObject({ name: z.string() });

export const resourceSpec = z.object({
  min_scale: optionalNull(z.int()),
  max_scale: optionalNull(z.int()),
  cpu: optionalNull(z.number()),
  cpu_limit: optionalNull(z.number()),
  memory_mb: optionalNull(z.int()),
  memory_limit_mb: optionalNull(z.int()),
  queue_min_scale: optionalNull(z.int()),
  queue_max_scale: optionalNull(z.int()),
  queue_cpu: optionalNull(z.number()),
  queue_cpu_limit: optionalNull(z.number()),
  queue_memory_mb: optionalNull(z.int()),
  queue_memory_limit_mb: optionalNull(z.int()),
  orchestrator_cpu: optionalNull(z.number()),
  orchestrator_cpu_limit: optionalNull(z.number()),
  orchestrator_memory_mb: optionalNull(z.int()),
  orchestrator_memory_limit_mb: optionalNull(z.int()),
  orchestrator_min_scale: optionalNull(z.int()),
  orchestrator_max_scale: optionalNull(z.int()),
  executor_cpu: optionalNull(z.number()),
  executor_cpu_limit: optionalNull(z.number()),
  executor_memory_mb: optionalNull(z.int()),
  executor_memory_limit_mb: optionalNull(z.int()),
  cache_cpu: optionalNull(z.number()),
  cache_cpu_limit: optionalNull(z.number()),
  cache_memory_mb: optionalNull(z.int()),
  cache_memory_limit_mb: optionalNull(z.int()),
  labels: optionalNull(z.record(z.string(), z.string())),
  annotations: optionalNull(z.record(z.string(), z.string())),
  service_account_name: optionalNull(z.string()),
  image_pull_secrets: optionalNull(z.array(namedObject)),
  volumes: optionalNull(z.array(namedObject)),
  volume_mounts: optionalNull(z.array(namedObject)),
  init_containers: optionalNull(z.array(namedObject)),
  sidecars: optionalNull(z.array(namedObject)),
  db_cpu: optionalNull(z.number()),
  db_cpu_limit: optionalNull(z.number()),
  db_memory_mb: optionalNull(z.int()),
  db_memory_limit_mb: optionalNull(z.int()),
  db_storage_gi: optionalNull(z.int()),
  db_max_connections: optionalNull(z.int()),
});
export type ResourceSpec = z.input<typeof resourceSpec>;

export const sourceConfig = z.object({
  integration_id: optionalNull(z.guid()),
  repo_url: optionalNull(z.string()),
  deployment_type: optionalNull(z.enum(DEPLOYMENT_TYPES)),
  build_on_push: optionalNull(z.boolean()),
  custom_url: optionalNull(z.string()),
  resource_spec: optionalNull(resourceSpec),
  listener_id: optionalNull(z.guid()),
  listener_config: optionalNull(z.object({ k8s_namespace: optionalNull(z.string()) })),
  install_command: optionalNull(z.string()),
  build_command: optionalNull(z.string()),
});
/** Stored without deployment_type, which is a column of its own. */
export type StoredSourceConfig = Omit<z.input<typeof sourceConfig>, 'deployment_type'>;

export const sourceRevisionConfig = z.object({
  repo_ref: optionalNull(z.string()),
  graph_config_path: optionalNull(z.string()),
  image_uri: optionalNull(z.string()),
  source_tarball_path: optionalNull(z.string()),
  repo_commit_sha: optionalNull(z.string()),
});
export type SourceRevisionConfig = z.input<typeof sourceRevisionConfig>;

export const secret = z.object({ name: z.string(), value: z.string() });
export type Secret = z.infer<typeof secret>;
export const secretReference = z.object({ name: z.string(), secret_name: z.string(), secret_key: z.string() });
export type SecretReference = z.infer<typeof secretReference>;

// Request bodies.
export const sourceRevisionConfigRequest = sourceRevisionConfig.omit({ repo_commit_sha: true });

export const deploymentCreate = z.object({
  name: z.string().min(1),
  source: z.enum(DEPLOYMENT_SOURCES),
  source_config: sourceConfig,
  source_revision_config: sourceRevisionConfigRequest,
  secrets: z.array(secret),
  secret_references: z.array(secretReference).nullish(),
});
export type DeploymentCreate = z.output<typeof deploymentCreate>;

export const REVISION_SOURCES = ['codehost', 'internal_container', 'internal_source'] as const;
export type RevisionSource = (typeof REVISION_SOURCES)[number];

/** E7: null or absent leaves a field as it is. `name` and `source` are read only to refuse a change. */
export const deploymentPatch = z.object({
  name: z.string().nullish(),
  source: z.enum(DEPLOYMENT_SOURCES).nullish(),
  revision_source: z.enum(REVISION_SOURCES).nullish(),
  source_config: sourceConfig.nullish(),
  source_revision_config: sourceRevisionConfigRequest.nullish(),
  secrets: z.array(secret).nullish(),
  secret_references: z.array(secretReference).nullish(),
});
export type DeploymentPatch = z.output<typeof deploymentPatch>;

/** POST /v2/deployments/{id}/revisions: always a new revision, from the latest one's config and these fields. */
export const revisionCreate = z.object({
  revision_source: z.enum(REVISION_SOURCES).nullish(),
  source_revision_config: sourceRevisionConfigRequest.nullish(),
  secrets: z.array(secret).nullish(),
});

export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The body of build_logs and deploy_logs, as the hosted CLI sends it. */
export const logsRequest = z.object({
  limit: z.int().min(1).max(1000).default(100),
  order: z.enum(['asc', 'desc']).default('desc'),
  /** A `next_offset` answered before: the page starts after that entry. */
  offset: z.string().max(200).nullish(),
  level: z.enum(LOG_LEVELS).nullish(),
  /** Only entries whose message contains this text (case-insensitive). */
  query: z.string().max(1000).nullish(),
  start_time: requestTimestamp.nullish(),
  end_time: requestTimestamp.nullish(),
});
export type LogsRequest = z.output<typeof logsRequest>;

// Queries and paths.
export const pageQuery = {
  limit: queryInteger({ min: 1, max: 100 }).default(20),
  offset: queryInteger({ min: 0 }).default(0),
};

export const deploymentsQuery = z.object({
  ...pageQuery,
  name_contains: z.string().optional(),
  status: z.string().optional(),
  remote_reconciled: queryBoolean.optional(),
  tag_value_ids: z.array(z.guid()).optional(),
  image_version: z.string().optional(),
  deployment_type: z.enum(DEPLOYMENT_TYPES).optional(),
  deployment_ids: z.array(z.guid()).optional(),
});
export type DeploymentsQuery = z.output<typeof deploymentsQuery>;
/** List parameters of deploymentsQuery (see queryParams). */
export const DEPLOYMENTS_QUERY_LISTS = ['tag_value_ids', 'deployment_ids'];

export const revisionsQuery = z.object({
  ...pageQuery,
  status: z.array(z.enum(REVISION_STATUSES)).optional(),
});
/** List parameters of revisionsQuery (see queryParams). */
export const REVISIONS_QUERY_LISTS = ['status'];
export type RevisionsQuery = z.output<typeof revisionsQuery>;

export const deleteDeploymentQuery = z.object({ delete_tracing_project: queryBoolean.default(false) });
export const deleteDeploymentsQuery = z.object({ deployment_ids: z.array(z.guid()).min(1).max(100) });
/** List parameters of deleteDeploymentsQuery (see queryParams). */
export const DELETE_DEPLOYMENTS_QUERY_LISTS = ['deployment_ids'];
/** The bulk DELETE body (the service publishes no shape for it): one entry per id asked for. */
export const deletionResultsSchema = z.object({
  results: z.array(z.object({ deployment_id: z.string(), deleted: z.boolean(), detail: z.string().optional() })),
});
export type DeletionResult = z.infer<typeof deletionResultsSchema>['results'][number];

export const deploymentIdParams = z.object({ deployment_id: z.guid() });
/** The hosted CLI passes the deployment id as project_id. */
export const projectIdParams = z.object({ project_id: z.guid() });
export const projectRevisionIdParams = z.object({ project_id: z.guid(), revision_id: z.guid() });
export const revisionIdParams = z.object({ deployment_id: z.guid(), revision_id: z.guid() });
export const integrationIdParams = z.object({ integration_id: z.guid() });

// Response shapes, as reference-openapi.json declares them.
export const timestamp = z.iso.datetime({ offset: true });

export const deploymentResponseSchema = z.object({
  name: z.string(),
  source: z.enum(DEPLOYMENT_SOURCES),
  source_config: sourceConfig,
  source_revision_config: sourceRevisionConfig,
  secrets: z.array(secret),
  secret_references: z.array(secretReference).nullable(),
  id: z.guid(),
  tenant_id: z.guid(),
  created_at: timestamp,
  updated_at: timestamp,
  status: z.enum(DEPLOYMENT_STATUSES),
  latest_revision_id: z.guid().nullable(),
  active_revision_id: z.guid().nullable(),
  image_version: z.string().nullable(),
});
export type DeploymentResponse = z.infer<typeof deploymentResponseSchema>;

export const revisionResponseSchema = z.object({
  id: z.guid(),
  created_at: timestamp,
  updated_at: timestamp,
  status: z.enum(REVISION_STATUSES),
  source: z.enum(DEPLOYMENT_SOURCES),
  source_revision_config: sourceRevisionConfig,
});
export type RevisionResponse = z.infer<typeof revisionResponseSchema>;

export const pushTokenSchema = z.object({
  token: z.string(),
  registry_url: z.string(),
  expires_at: timestamp,
});

export const uploadUrlSchema = z.object({
  upload_url: z.string(),
  object_path: z.string(),
});
export type UploadUrl = z.infer<typeof uploadUrlSchema>;

export const logEntrySchema = z.object({
  id: z.string(),
  /** Epoch milliseconds on the emulator clock. */
  timestamp: z.int(),
  level: z.enum(LOG_LEVELS),
  message: z.string(),
});
export type LogEntry = z.infer<typeof logEntrySchema>;
export const logsPageSchema = z.object({ logs: z.array(logEntrySchema), next_offset: z.string().nullable() });
export type LogsPage = z.infer<typeof logsPageSchema>;

export const listPage = <S extends z.ZodType>(resource: S) =>
  z.object({ resources: z.array(resource), offset: z.int() });
export const deploymentsListSchema = listPage(deploymentResponseSchema);
export type DeploymentsList = z.infer<typeof deploymentsListSchema>;
export const revisionsListSchema = listPage(revisionResponseSchema);
export type RevisionsList = z.infer<typeof revisionsListSchema>;

export const oauthProviderResponseSchema = z.object({
  id: z.string(),
  organization_id: z.string(),
  provider_id: z.string(),
  name: z.string(),
  client_id: z.string(),
  auth_url: z.string(),
  token_url: z.string(),
  uses_pkce: z.boolean(),
  code_challenge_method: z.string().nullable(),
  provider_type: z.string().nullable(),
  mcp_server_url: z.string().nullable(),
  token_endpoint_auth_method: z.string(),
  is_dynamic_client: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type OAuthProviderResponse = z.infer<typeof oauthProviderResponseSchema>;

export const codehostIntegrationSchema = z.object({ id: z.guid(), installation_id: z.int(), name: z.string() });
export type CodehostIntegration = z.infer<typeof codehostIntegrationSchema>;

export const codehostRepositorySchema = z.object({
  host_integration_id: z.guid(),
  id: z.int(),
  name: z.string(),
  owner: z.string(),
  url: z.string(),
  default_branch: z.string(),
});
export type CodehostRepository = z.infer<typeof codehostRepositorySchema>;

/**
 * The statuses a revision reached, oldest first, each with the emulator-clock time it reached it (the times its logs
 * give).
 */
export const revisionHistorySchema = z.array(
  z.object({
    status: z.enum(REVISION_STATUSES),
    at: timestamp,
    /** The words of a forced ending (the revision fault's message), else null. */
    detail: z.string().nullable(),
  }),
);
export type RevisionHistory = z.output<typeof revisionHistorySchema>;

// The work the deployments schedule, as GET /_localplane/tasks describes each task beside its label.
export const revisionStepTaskSchema = z.object({
  kind: z.literal('revision_step'),
  workspace_id: z.guid(),
  deployment_id: z.guid(),
  revision_id: z.guid(),
  /** The status the revision is in until the task runs. */
  from_status: z.enum(REVISION_STEP_STATUSES),
  /** The next step, DEPLOYED, or the ending a revision fault forces (BUILD_FAILED, SKIPPED, ...). */
  to_status: z.enum(REVISION_STATUSES),
});
export type RevisionStepTask = z.infer<typeof revisionStepTaskSchema>;
export const deploymentDeletionTaskSchema = z.object({
  kind: z.literal('deployment_deletion'),
  workspace_id: z.guid(),
  /** The deployment AWAITING_DELETE that is gone once the task runs. */
  deployment_id: z.guid(),
});
export type DeploymentDeletionTask = z.infer<typeof deploymentDeletionTaskSchema>;
