import { badRequest } from '../shared/errors.ts';
import type { IdGenerator } from '../shared/ids.ts';
import type { Micros } from '../shared/time.ts';
import { newRevision } from './creation.ts';
import { checkRevisionSource } from './source-rules.ts';
import type { DeploymentPatch, SourceRevisionConfig, StoredSourceConfig } from './schemas.ts';
import type { DeploymentRow, DeploymentView, RevisionRow } from './store.ts';

const IMMUTABLE_CONFIG_FIELDS = ['integration_id', 'repo_url', 'listener_id'] as const;
const IN_PLACE_CONFIG_FIELDS = [
  'build_on_push',
  'custom_url',
  'install_command',
  'build_command',
  'listener_config',
  'resource_spec',
] as const;

const changed = (given: unknown, current: unknown) =>
  given !== null && given !== undefined && JSON.stringify(given) !== JSON.stringify(current ?? null);
const cannotChange = (field: string) => badRequest(`${field} cannot be changed once the deployment is created.`);

/**
 * E7. A non-null source_revision_config field, non-null secrets or a changed resource_spec
 * make a new revision (from the latest one's config), as POST .../revisions always does; the
 * other source_config fields change in place; name, source, integration_id, repo_url, deployment_type and listener_id
 * are fixed.
 */
export function applyPatch(
  current: DeploymentView,
  patch: DeploymentPatch,
  context: { ids: IdGenerator; now: Micros; alwaysNewRevision?: boolean },
) {
  if (changed(patch.name, current.name)) throw cannotChange('name');
  if (changed(patch.source, current.source)) throw cannotChange('source');
  const storedConfig = JSON.parse(current.source_config) as StoredSourceConfig;
  const given = patch.source_config;
  if (given && changed(given.deployment_type, current.deployment_type)) throw cannotChange('deployment_type');
  for (const field of IMMUTABLE_CONFIG_FIELDS)
    if (given && changed(given[field], storedConfig[field])) throw cannotChange(field);
  if (patch.secret_references && current.source !== 'external_container') {
    throw badRequest('Source configuration error: secret_references are only applicable to source external_container.');
  }

  const config: StoredSourceConfig = { ...storedConfig };
  for (const field of IN_PLACE_CONFIG_FIELDS)
    if (given?.[field] != null) Object.assign(config, { [field]: given[field] });
  const revisionFields = Object.entries(patch.source_revision_config ?? {}).filter(([, value]) => value !== null);
  const needsRevision =
    context.alwaysNewRevision ||
    revisionFields.length > 0 ||
    patch.secrets != null ||
    changed(given?.resource_spec, storedConfig.resource_spec);

  const { repo_commit_sha: _, ...latestConfig } = JSON.parse(
    current.latest_source_revision_config ?? '{}',
  ) as SourceRevisionConfig;
  const revisionConfig = { ...latestConfig, ...Object.fromEntries(revisionFields) };
  if (config.build_on_push && revisionConfig.repo_ref?.startsWith('refs/tags/')) {
    throw badRequest(
      'Source configuration error: build_on_push cannot be enabled when repo_ref is a tag (refs/tags/...).',
    );
  }
  if (patch.revision_source)
    checkRevisionSource({ source: current.source, config }, patch.revision_source, revisionConfig);
  const revision: RevisionRow | null = needsRevision
    ? newRevision(context.ids, current.id, patch.revision_source ?? current.source, revisionConfig, context.now)
    : null;
  const deployment: DeploymentRow = {
    ...current,
    source_config: JSON.stringify(config),
    secrets: patch.secrets ? JSON.stringify(patch.secrets) : current.secrets,
    secret_references: patch.secret_references ? JSON.stringify(patch.secret_references) : current.secret_references,
    latest_revision_id: revision?.id ?? current.latest_revision_id,
    updated_at: context.now,
  };
  return { deployment, revision };
}
