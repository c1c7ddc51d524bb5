import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import type { Localplane } from '../../src/index.ts';

export interface StateDumper {
  /**
   * Every table of the instance's database, rows sorted, then every file under
   * `filesDir` with its size and modification time: equal dumps, same state.
   */
  dump(): string;
  close(): void;
}

function listFiles(root: string): string[] {
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      const { size, mtimeMs } = statSync(path);
      return `${relative(root, path)} ${size} ${mtimeMs}`;
    })
    .sort();
}

/**
 * Reads an instance's state from outside, as a test sees it: its SQLite file opened read-only
 * beside the server's connection (WAL lets both in). The table dump is taken again only when
 * SQLite's data_version says another connection committed since the last one.
 */
export function stateDumper(instance: Pick<Localplane, 'dataDir' | 'filesDir'>): StateDumper {
  const db = new Database(join(instance.dataDir, 'localplane.sqlite'), { readonly: true, fileMustExist: true });
  const tables = db
    .prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .pluck()
    .all();
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  let dumpedVersion: number | undefined;
  let tablesDump = '';
  return {
    dump() {
      const version = dataVersion.get()!;
      if (version !== dumpedVersion) {
        const rows = tables.map((table) => {
          const lines = db
            .prepare(`SELECT * FROM "${table}"`)
            .raw()
            .all()
            .map((row) => JSON.stringify(row));
          return `${table}\n${lines.sort().join('\n')}`;
        });
        tablesDump = rows.join('\n\n');
        dumpedVersion = version;
      }
      return `${tablesDump}\n\nfiles\n${listFiles(instance.filesDir!).join('\n')}`;
    },
    close: () => db.close(),
  };
}
