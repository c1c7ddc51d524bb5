import type { InstanceCore } from '../core.ts';
import { snapshotRoutes } from './routes.ts';
import { Snapshots } from './snapshots.ts';

/**
 * Snapshots of every state part with a snapshot section: built after the modules that register
 * them. `template` is the content key of the instance's fixture template.
 */
export function snapshotsModule(core: InstanceCore, template: () => string) {
  const snapshots = new Snapshots({ parts: core.parts, template, seed: core.seed });
  core.teardown.add('resources', () => snapshots.discard());
  const adminRoutes = snapshotRoutes({ save: (path) => snapshots.save(path), restore: (path) => snapshots.restore(path) });
  return { snapshots, adminRoutes };
}
