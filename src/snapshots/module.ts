import { join, resolve } from 'node:path';
import type { InstanceCore } from '../core.ts';
import { SnapshotFolder } from './folder.ts';
import { snapshotRoutes } from './routes.ts';
import { Snapshots } from './snapshots.ts';

/**
 * Snapshots of every state part with a snapshot section: built after the modules that register
 * them. `template` is the content key of the instance's fixture template; `folder` is where the
 * admin API keeps snapshot files by name (default `<dataDir>/snapshots`, made on the first save).
 */
export function snapshotsModule(core: InstanceCore, template: () => string, folder = join(core.dataDir, 'snapshots')) {
  const snapshots = new Snapshots({ parts: core.parts, template, seed: core.seed });
  core.teardown.add('resources', () => snapshots.discard());
  const save = (path: string) => snapshots.save(path);
  const restore = (path: string) => snapshots.restore(path);
  const savedSnapshots = new SnapshotFolder(resolve(folder));
  return {
    save,
    restore,
    folder: savedSnapshots.path,
    adminRoutes: snapshotRoutes({ save, restore, folder: savedSnapshots }),
  };
}
