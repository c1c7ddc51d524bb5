import { z } from 'zod';
import { REVISION_STEP_STATUSES } from '../config.ts';
import { FLAG, statementCache, TIMESTAMP, type Db, type TableSet } from '../shared/db.ts';
import type { Micros } from '../shared/time.ts';
import { TracingStore, type TracingSession } from '../tracing/store.ts';
import { LISTENER_COMPUTE_TYPES, listenerComputeConfig } from './listener-schemas.ts';
import {
  DEPLOYMENT_SOURCES,
  DEPLOYMENT_STATUSES,
  DEPLOYMENT_TYPES,
  REVISION_STATUSES,
  secret,
  secretReference,
  sourceConfig,
  sourceRevisionConfig,
  type DeploymentSource,
  type DeploymentsQuery,
  type DeploymentStatus,
  type DeploymentType,
  type RevisionsQuery,
  type RevisionStatus,
} from './schemas.ts';

export const deploymentTables: TableSet = {
  ddl: `
CREATE TABLE IF NOT EXISTS deployment_tenants (
  tenant_id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL,
  self_hosted INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS oauth_providers (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  name TEXT NOT NULL,
  client_id TEXT NOT NULL,
  client_secret TEXT,
  auth_url TEXT NOT NULL,
  token_url TEXT NOT NULL,
  uses_pkce INTEGER NOT NULL,
  code_challenge_method TEXT,
  provider_type TEXT,
  mcp_server_url TEXT,
  token_endpoint_auth_method TEXT,
  is_dynamic_client INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (tenant_id, provider_id)
);
CREATE TABLE IF NOT EXISTS codehost_integrations (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  installation_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  position INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS codehost_repos (
  integration_id TEXT NOT NULL,
  id INTEGER NOT NULL,
  name TEXT NOT NULL,
  owner TEXT NOT NULL,
  url TEXT NOT NULL,
  default_branch TEXT NOT NULL,
  position INTEGER NOT NULL,
  PRIMARY KEY (integration_id, id)
);
CREATE TABLE IF NOT EXISTS listeners (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  compute_type TEXT NOT NULL,
  compute_id TEXT NOT NULL,
  compute_config TEXT NOT NULL,
  version TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS deployments (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  name TEXT NOT NULL,
  source TEXT NOT NULL,
  deployment_type TEXT,
  status TEXT NOT NULL,
  source_config TEXT NOT NULL,
  secrets TEXT NOT NULL,
  secret_references TEXT,
  image_version TEXT,
  tag_value_ids TEXT NOT NULL,
  remote_reconciled INTEGER NOT NULL,
  latest_revision_id TEXT,
  active_revision_id TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS deployments_by_tenant ON deployments (tenant_id, created_at, id);
CREATE TABLE IF NOT EXISTS deployment_revisions (
  id TEXT PRIMARY KEY,
  deployment_id TEXT NOT NULL,
  status TEXT NOT NULL,
  source TEXT NOT NULL,
  source_revision_config TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS deployment_revisions_by_deployment ON deployment_revisions (deployment_id, created_at, id);
CREATE TABLE IF NOT EXISTS deployment_revision_events (
  revision_id TEXT NOT NULL,
  status TEXT NOT NULL,
  at INTEGER NOT NULL,
  detail TEXT
);
CREATE INDEX IF NOT EXISTS deployment_revision_events_by_revision ON deployment_revision_events (revision_id);
CREATE TABLE IF NOT EXISTS deployment_deletions (
  deployment_id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  due_at INTEGER NOT NULL,
  delete_tracing_project INTEGER NOT NULL
);`,
  seeded: [
    'deployment_tenants',
    'oauth_providers',
    'codehost_integrations',
    'codehost_repos',
    'listeners',
    'deployments',
    'deployment_revisions',
  ],
  runtime: ['deployment_revision_events', 'deployment_deletions'],
  workspaceRows: {
    deployment_tenants: 'tenant_id = ?',
    oauth_providers: 'tenant_id = ?',
    codehost_integrations: 'tenant_id = ?',
    codehost_repos: 'integration_id IN (SELECT id FROM {schema}.codehost_integrations WHERE tenant_id = ?)',
    listeners: 'tenant_id = ?',
    deployments: 'tenant_id = ?',
    deployment_revisions: 'deployment_id IN (SELECT id FROM {schema}.deployments WHERE tenant_id = ?)',
    deployment_revision_events: `revision_id IN (SELECT r.id FROM {schema}.deployment_revisions r
      JOIN {schema}.deployments d ON d.id = r.deployment_id WHERE d.tenant_id = ?)`,
    deployment_deletions: 'tenant_id = ?',
  },
  columns: {
    deployment_tenants: { self_hosted: FLAG },
    oauth_providers: { uses_pkce: FLAG, is_dynamic_client: FLAG, created_at: TIMESTAMP, updated_at: TIMESTAMP },
    listeners: {
      compute_type: { oneOf: LISTENER_COMPUTE_TYPES },
      compute_config: { json: listenerComputeConfig },
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
    },
    deployments: {
      source: { oneOf: DEPLOYMENT_SOURCES },
      deployment_type: { oneOf: DEPLOYMENT_TYPES },
      status: { oneOf: DEPLOYMENT_STATUSES },
      source_config: { json: sourceConfig.omit({ deployment_type: true }) },
      secrets: { json: z.array(secret) },
      secret_references: { json: z.array(secretReference) },
      tag_value_ids: { json: z.array(z.string()) },
      remote_reconciled: FLAG,
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
    },
    deployment_revisions: {
      status: { oneOf: REVISION_STATUSES },
      source: { oneOf: DEPLOYMENT_SOURCES },
      source_revision_config: { json: sourceRevisionConfig },
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
    },
    deployment_revision_events: { status: { oneOf: REVISION_STATUSES }, at: TIMESTAMP },
    deployment_deletions: { due_at: TIMESTAMP, delete_tracing_project: FLAG },
  },
};

/** SQLite has no boolean: 0 or 1 (FLAG). */
type Flag = 0 | 1;

export interface DeploymentTenantRow {
  tenant_id: string;
  /** The organization the workspace belongs to, which its OAuth providers name. */
  organization_id: string;
  self_hosted: Flag;
}

export interface OAuthProviderRow {
  id: string;
  tenant_id: string;
  organization_id: string;
  provider_id: string;
  name: string;
  client_id: string;
  /** Write-only: stored for the OAuth flows, never shown. */
  client_secret: string | null;
  auth_url: string;
  token_url: string;
  uses_pkce: Flag;
  code_challenge_method: string | null;
  provider_type: string | null;
  mcp_server_url: string | null;
  /** null: the default applies. */
  token_endpoint_auth_method: string | null;
  /** null: the default (false) applies. */
  is_dynamic_client: Flag | null;
  created_at: Micros;
  updated_at: Micros;
}

export interface CodehostIntegrationRow {
  id: string;
  tenant_id: string;
  installation_id: number;
  name: string;
  /** Listing order. */
  position: number;
}

export interface CodehostRepoRow {
  integration_id: string;
  id: number;
  name: string;
  owner: string;
  url: string;
  default_branch: string;
  /** Listing order within the integration. */
  position: number;
}

export interface ListenerRow {
  id: string;
  tenant_id: string;
  compute_type: 'k8s';
  compute_id: string;
  /** JSON of {k8s_namespaces}. */
  compute_config: string;
  version: string | null;
  created_at: Micros;
  updated_at: Micros;
}

export interface DeploymentRow {
  id: string;
  tenant_id: string;
  name: string;
  source: DeploymentSource;
  deployment_type: DeploymentType | null;
  status: DeploymentStatus;
  /** JSON of StoredSourceConfig. */
  source_config: string;
  /** JSON array of {name, value}; values are never returned. */
  secrets: string;
  /** JSON array of SecretReference, or null. */
  secret_references: string | null;
  image_version: string | null;
  /** JSON array of tag value ids. */
  tag_value_ids: string;
  remote_reconciled: Flag;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  created_at: Micros;
  updated_at: Micros;
}

/** A deployment with its latest revision's source_revision_config (JSON), as responses show it. */
export interface DeploymentView extends DeploymentRow {
  latest_source_revision_config: string | null;
}

export interface RevisionRow {
  id: string;
  deployment_id: string;
  status: RevisionStatus;
  source: DeploymentSource;
  /** JSON of SourceRevisionConfig, repo_commit_sha included. */
  source_revision_config: string;
  created_at: Micros;
  updated_at: Micros;
}

/** A status a revision reached, when, and (for a forced ending) the words its logs give. */
export interface RevisionEventRow {
  revision_id: string;
  status: RevisionStatus;
  at: Micros;
  detail: string | null;
}

/** A deployment AWAITING_DELETE, and when it is to be gone. */
export interface DeploymentDeletionRow {
  deployment_id: string;
  tenant_id: string;
  due_at: Micros;
  delete_tracing_project: Flag;
}

/** The row each of the domain's tables holds. */
interface TableRows {
  deployment_tenants: DeploymentTenantRow;
  oauth_providers: OAuthProviderRow;
  codehost_integrations: CodehostIntegrationRow;
  codehost_repos: CodehostRepoRow;
  listeners: ListenerRow;
  deployments: DeploymentRow;
  deployment_revisions: RevisionRow;
  deployment_revision_events: RevisionEventRow;
  deployment_deletions: DeploymentDeletionRow;
}

const insertSql = (table: string, columns: readonly string[]) =>
  `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map((column) => `@${column}`).join(', ')})`;

const DEPLOYMENT_VIEW = `SELECT d.*, r.source_revision_config AS latest_source_revision_config
  FROM deployments d LEFT JOIN deployment_revisions r ON r.id = d.latest_revision_id`;
const DEPLOYMENT_ORDER = 'ORDER BY d.created_at DESC, d.id DESC';
const placeholders = (values: readonly unknown[]) => values.map(() => '?').join(', ');

export class DeploymentStore {
  private readonly statements;
  private readonly prepared;

  constructor(private readonly db: Db) {
    this.prepared = statementCache(db);
    const prepare = <P extends unknown[], R = unknown>(sql: string) => db.prepare<P, R>(sql);
    this.statements = {
      tenant: prepare<[string], DeploymentTenantRow>('SELECT * FROM deployment_tenants WHERE tenant_id = ?'),
      providers: prepare<[string], OAuthProviderRow>(
        'SELECT * FROM oauth_providers WHERE tenant_id = ? ORDER BY created_at, id',
      ),
      provider: prepare<[string, string], OAuthProviderRow>(
        'SELECT * FROM oauth_providers WHERE tenant_id = ? AND provider_id = ?',
      ),
      integrations: prepare<[string], CodehostIntegrationRow>(
        'SELECT * FROM codehost_integrations WHERE tenant_id = ? ORDER BY position',
      ),
      integration: prepare<[string, string], CodehostIntegrationRow>(
        'SELECT * FROM codehost_integrations WHERE tenant_id = ? AND id = ?',
      ),
      repos: prepare<[string], CodehostRepoRow>(
        'SELECT * FROM codehost_repos WHERE integration_id = ? ORDER BY position',
      ),
      listeners: prepare<[string], ListenerRow>('SELECT * FROM listeners WHERE tenant_id = ? ORDER BY created_at, id'),
      listener: prepare<[string, string], ListenerRow>('SELECT * FROM listeners WHERE tenant_id = ? AND id = ?'),
      listenerByComputeId: prepare<[string, string], ListenerRow>(
        'SELECT * FROM listeners WHERE tenant_id = ? AND compute_id = ?',
      ),
      listenerUsers: prepare<[string, string], { id: string }>(
        "SELECT id FROM deployments WHERE tenant_id = ? AND json_extract(source_config, '$.listener_id') = ? " +
          'ORDER BY created_at, id',
      ),
      mcpServerFixture: prepare<[string], OAuthProviderRow>(
        'SELECT * FROM seed.oauth_providers WHERE mcp_server_url = ? ORDER BY created_at, id LIMIT 1',
      ),
      deployment: prepare<[string, string], DeploymentView>(`${DEPLOYMENT_VIEW} WHERE d.tenant_id = ? AND d.id = ?`),
      deploymentsOf: prepare<[string], DeploymentRow>(
        `SELECT * FROM deployments d WHERE d.tenant_id = ? ${DEPLOYMENT_ORDER}`,
      ),
      revision: prepare<[string, string], RevisionRow>(
        'SELECT * FROM deployment_revisions WHERE deployment_id = ? AND id = ?',
      ),
      revisionsInProgress: prepare<string[], RevisionRow>(
        `SELECT * FROM deployment_revisions WHERE status IN (${placeholders(REVISION_STEP_STATUSES)}) ORDER BY ` +
          `created_at, id`,
      ),
      deploymentById: prepare<[string], DeploymentView>(`${DEPLOYMENT_VIEW} WHERE d.id = ?`),
      revisionEvents: prepare<[string], RevisionEventRow>(
        'SELECT * FROM deployment_revision_events WHERE revision_id = ? ORDER BY rowid',
      ),
      deletion: prepare<[string], DeploymentDeletionRow>('SELECT * FROM deployment_deletions WHERE deployment_id = ?'),
      deletions: prepare<[], DeploymentDeletionRow>(
        'SELECT * FROM deployment_deletions ORDER BY due_at, deployment_id',
      ),
    };
  }

  /** Inserts a row into one of the domain's tables; static, for the fixtures, which seed them before any store. */
  static insert<Table extends keyof TableRows>(db: Db, table: Table, row: TableRows[Table]) {
    db.prepare(insertSql(table, Object.keys(row))).run(row);
  }

  /** A new deployment with its first revision and its tracing project, all or nothing. */
  create(deployment: DeploymentRow, revision: RevisionRow, project: TracingSession): void {
    this.db.transaction(() => {
      DeploymentStore.insert(this.db, 'deployments', deployment);
      this.addRevision(revision);
      TracingStore.insertSession(this.db, project);
    })();
  }

  /**
   * Saves a patched deployment and, when the patch made one, its new revision, which
   * supersedes the deployment's revisions still in progress: they end INTERRUPTED.
   */
  update(deployment: DeploymentRow, revision: RevisionRow | null): void {
    this.db.transaction(() => {
      if (revision) {
        this.interruptInProgress(deployment.id, revision.created_at);
        this.addRevision(revision);
      }
      this.prepared(
        `UPDATE deployments SET source_config = @source_config, secrets = @secrets,
           secret_references = @secret_references, latest_revision_id = @latest_revision_id, updated_at = @updated_at
           WHERE id = @id`,
      ).run(deployment);
    })();
  }

  /** Removes a deployment with its revisions and, when asked, its tracing project (the session of the same name). */
  delete(deployment: DeploymentRow, options: { deleteTracingProject: boolean }): void {
    this.db.transaction(() => {
      this.prepared(
        'DELETE FROM deployment_revision_events WHERE revision_id IN (SELECT id FROM deployment_revisions WHERE ' +
          'deployment_id = ?)',
      ).run(deployment.id);
      this.prepared('DELETE FROM deployment_revisions WHERE deployment_id = ?').run(deployment.id);
      this.prepared('DELETE FROM deployment_deletions WHERE deployment_id = ?').run(deployment.id);
      this.prepared('DELETE FROM deployments WHERE id = ?').run(deployment.id);
      if (options.deleteTracingProject)
        this.prepared('DELETE FROM sessions WHERE tenant_id = ? AND name = ?').run(
          deployment.tenant_id,
          deployment.name,
        );
    })();
  }

  /**
   * A revision's new status (with the words its logs give for a forced ending); reaching
   * DEPLOYED makes it the active one and its deployment READY if it awaited its database.
   */
  setRevisionStatus(revision: RevisionRow, status: RevisionStatus, now: Micros, detail: string | null = null): void {
    this.db.transaction(() => {
      this.prepared('UPDATE deployment_revisions SET status = ?, updated_at = ? WHERE id = ?').run(
        status,
        now,
        revision.id,
      );
      this.addEvent({ revision_id: revision.id, status, at: now, detail });
      if (status !== 'DEPLOYED') return;
      this.prepared(
        `UPDATE deployments SET active_revision_id = ?, updated_at = ?,
           status = CASE status WHEN 'AWAITING_DATABASE' THEN 'READY' ELSE status END WHERE id = ?`,
      ).run(revision.id, now, revision.deployment_id);
    })();
  }

  setDeploymentStatus(id: string, status: DeploymentStatus, now: Micros): void {
    this.prepared('UPDATE deployments SET status = ?, updated_at = ? WHERE id = ?').run(status, now, id);
  }

  /**
   * A deletion that takes time: the deployment AWAITING_DELETE until `dueAt`, its revisions in progress INTERRUPTED.
   */
  startDeletion(
    deployment: DeploymentRow,
    dueAt: Micros,
    options: { deleteTracingProject: boolean; now: Micros },
  ): void {
    this.db.transaction(() => {
      this.interruptInProgress(deployment.id, options.now);
      this.setDeploymentStatus(deployment.id, 'AWAITING_DELETE', options.now);
      const row: DeploymentDeletionRow = {
        deployment_id: deployment.id,
        tenant_id: deployment.tenant_id,
        due_at: dueAt,
        delete_tracing_project: options.deleteTracingProject ? 1 : 0,
      };
      DeploymentStore.insert(this.db, 'deployment_deletions', row);
    })();
  }

  /** The pending deletion of a deployment, if it is AWAITING_DELETE. */
  deletion(deploymentId: string) {
    return this.statements.deletion.get(deploymentId);
  }

  /** Every pending deletion, of any workspace, soonest first. */
  deletions(): DeploymentDeletionRow[] {
    return this.statements.deletions.all();
  }

  /**
   * The statuses a revision reached since it was created here, in order (none for a seeded revision before it moved).
   */
  revisionEvents(revisionId: string): RevisionEventRow[] {
    return this.statements.revisionEvents.all(revisionId);
  }

  private addRevision(revision: RevisionRow): void {
    DeploymentStore.insert(this.db, 'deployment_revisions', revision);
    this.addEvent({ revision_id: revision.id, status: revision.status, at: revision.created_at, detail: null });
  }

  private addEvent(event: RevisionEventRow): void {
    DeploymentStore.insert(this.db, 'deployment_revision_events', event);
  }

  /** A deployment's revisions still on their way to DEPLOYED end INTERRUPTED. */
  private interruptInProgress(deploymentId: string, now: Micros): void {
    const inProgress = `deployment_id = ? AND status IN (${placeholders(REVISION_STEP_STATUSES)})`;
    this.prepared(
      `INSERT INTO deployment_revision_events (revision_id, status, at, detail)
       SELECT id, 'INTERRUPTED', ?, NULL FROM deployment_revisions WHERE ${inProgress} ORDER BY created_at, id`,
    ).run(now, deploymentId, ...REVISION_STEP_STATUSES);
    this.prepared(`UPDATE deployment_revisions SET status = 'INTERRUPTED', updated_at = ? WHERE ${inProgress}`).run(
      now,
      deploymentId,
      ...REVISION_STEP_STATUSES,
    );
  }

  /** Every revision, of any workspace, that is on its way to DEPLOYED. */
  revisionsInProgress(): RevisionRow[] {
    return this.statements.revisionsInProgress.all(...REVISION_STEP_STATUSES);
  }

  /** A deployment of any workspace, for the admin knobs. */
  deploymentById(id: string) {
    return this.statements.deploymentById.get(id);
  }

  /** Whether deployments of the workspace run on its own infrastructure (the only home of `external_container`). */
  isSelfHosted(tenantId: string): boolean {
    return this.statements.tenant.get(tenantId)?.self_hosted === 1;
  }

  /** The organization of a workspace of the deployment fixtures. */
  organizationOf(tenantId: string): string | undefined {
    return this.statements.tenant.get(tenantId)?.organization_id;
  }

  providers(tenantId: string) {
    return this.statements.providers.all(tenantId);
  }
  provider(tenantId: string, providerId: string) {
    return this.statements.provider.get(tenantId, providerId);
  }
  insertProvider(row: OAuthProviderRow): void {
    DeploymentStore.insert(this.db, 'oauth_providers', row);
  }
  updateProvider(row: OAuthProviderRow): void {
    this.prepared(
      `UPDATE oauth_providers SET name = @name, client_id = @client_id, client_secret = @client_secret,
         auth_url = @auth_url, token_url = @token_url, uses_pkce = @uses_pkce,
         code_challenge_method = @code_challenge_method, updated_at = @updated_at
         WHERE id = @id`,
    ).run(row);
  }
  deleteProvider(id: string): void {
    this.prepared('DELETE FROM oauth_providers WHERE id = ?').run(id);
  }
  /** A provider of the fixtures (any workspace's) for an MCP server: what discovering that server finds. */
  mcpServerFixture(mcpServerUrl: string) {
    return this.statements.mcpServerFixture.get(mcpServerUrl);
  }

  integrations(tenantId: string) {
    return this.statements.integrations.all(tenantId);
  }
  integration(tenantId: string, id: string) {
    return this.statements.integration.get(tenantId, id);
  }
  repos(integrationId: string) {
    return this.statements.repos.all(integrationId);
  }
  listeners(tenantId: string) {
    return this.statements.listeners.all(tenantId);
  }
  listener(tenantId: string, id: string) {
    return this.statements.listener.get(tenantId, id);
  }
  listenerByComputeId(tenantId: string, computeId: string) {
    return this.statements.listenerByComputeId.get(tenantId, computeId);
  }
  /** One page of the workspace's listeners, oldest first. */
  listenersPage(tenantId: string, page: { limit: number; offset: number }): ListenerRow[] {
    return this.prepared<unknown[], ListenerRow>(
      'SELECT * FROM listeners WHERE tenant_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?',
    ).all(tenantId, page.limit, page.offset);
  }
  /** The ids of the workspace's deployments that run on a listener. */
  listenerUsers(tenantId: string, listenerId: string): string[] {
    return this.statements.listenerUsers.all(tenantId, listenerId).map((row) => row.id);
  }
  insertListener(row: ListenerRow): void {
    DeploymentStore.insert(this.db, 'listeners', row);
  }
  updateListener(row: ListenerRow): void {
    this.prepared(
      'UPDATE listeners SET compute_config = @compute_config, version = @version, updated_at = @updated_at WHERE id ' +
        '= @id',
    ).run(row);
  }
  deleteListener(id: string): void {
    this.prepared('DELETE FROM listeners WHERE id = ?').run(id);
  }

  deployment(tenantId: string, id: string) {
    return this.statements.deployment.get(tenantId, id);
  }
  /** Every deployment of the workspace, in listing order. */
  deploymentsOf(tenantId: string) {
    return this.statements.deploymentsOf.all(tenantId);
  }

  /** One page of the workspace's deployments matching the E8 filters, newest first. */
  deployments(tenantId: string, query: DeploymentsQuery): DeploymentView[] {
    const conditions = ['d.tenant_id = ?'];
    const params: (string | number)[] = [tenantId];
    const where = (condition: string, ...values: (string | number)[]) => {
      conditions.push(condition);
      params.push(...values);
    };
    if (query.name_contains !== undefined) where('instr(lower(d.name), lower(?)) > 0', query.name_contains);
    if (query.status !== undefined) where('d.status = ?', query.status);
    if (query.remote_reconciled !== undefined) where('d.remote_reconciled = ?', query.remote_reconciled ? 1 : 0);
    if (query.tag_value_ids?.length) {
      where(
        `EXISTS (SELECT 1 FROM json_each(d.tag_value_ids) WHERE value IN (${placeholders(query.tag_value_ids)}))`,
        ...query.tag_value_ids,
      );
    }
    if (query.image_version !== undefined) where('d.image_version = ?', query.image_version);
    if (query.deployment_type !== undefined) where('d.deployment_type = ?', query.deployment_type);
    if (query.deployment_ids?.length) where(`d.id IN (${placeholders(query.deployment_ids)})`, ...query.deployment_ids);
    const sql = `${DEPLOYMENT_VIEW} WHERE ${conditions.join(' AND ')} ${DEPLOYMENT_ORDER} LIMIT ? OFFSET ?`;
    return this.prepared<unknown[], DeploymentView>(sql).all(...params, query.limit, query.offset);
  }

  revision(deploymentId: string, id: string) {
    return this.statements.revision.get(deploymentId, id);
  }
  /** Every revision of a deployment, newest first. */
  revisionsOf(deploymentId: string): RevisionRow[] {
    return this.revisions(deploymentId, { limit: -1, offset: 0 });
  }

  /** One page of a deployment's revisions, newest first, optionally of some statuses only. */
  revisions(deploymentId: string, query: RevisionsQuery): RevisionRow[] {
    const statuses = query.status?.length ? query.status : null;
    const sql = `SELECT * FROM deployment_revisions WHERE deployment_id = ?${
      statuses ? ` AND status IN ` + `(${placeholders(statuses)})` : ''
    }
      ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`;
    return this.prepared<unknown[], RevisionRow>(sql).all(deploymentId, ...(statuses ?? []), query.limit, query.offset);
  }
}
