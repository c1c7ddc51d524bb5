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
  const save = (path: string) => snapshots.save(path);
  const restore = (path: string) => snapshots.restore(path);
  return { save, restore, adminRoutes: snapshotRoutes({ save, restore }) };
}
