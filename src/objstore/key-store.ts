import { z } from 'zod';
import { valueInWords, type Db, type TableSet } from '../shared/db.ts';
import { OBJSTORE_PERMISSIONS, type ObjstoreKey, type ObjstoreKeyLookup, type ObjstorePermission } from './types.ts';

export const objstoreTables: TableSet = {
  ddl: `
CREATE TABLE IF NOT EXISTS objstore_keys (
  access_key_id TEXT PRIMARY KEY,
  secret_access_key TEXT NOT NULL,
  permissions TEXT NOT NULL,
  workspace_id TEXT
);
CREATE TABLE IF NOT EXISTS objstore_buckets (
  name TEXT PRIMARY KEY
);`,
  seeded: ['objstore_keys', 'objstore_buckets'],
  runtime: [],
  // Keys added for a workspace go with a reset of that workspace; the fixture keys have none.
  workspaceRows: { objstore_keys: 'workspace_id = ?' },
  // Every request signed with a key pair reads its permissions.
  columns: { objstore_keys: { permissions: { json: z.array(z.enum(OBJSTORE_PERMISSIONS)) } } },
  invalidRow(db, schema) {
    // The configured buckets come from the fixtures and never change: the seed's, in any state.
    const differing = db
      .prepare<[], unknown>(
        `SELECT name FROM (SELECT name FROM ${schema}.objstore_buckets EXCEPT SELECT name FROM seed.objstore_buckets)
         UNION ALL
         SELECT name FROM (SELECT name FROM seed.objstore_buckets EXCEPT SELECT name FROM ${schema}.objstore_buckets)
         LIMIT 1`,
      )
      .pluck()
      .get();
    return differing === undefined
      ? undefined
      : `objstore_buckets differs from this instance's configured buckets in ${valueInWords(differing)}`;
  },
};

interface KeyRow {
  access_key_id: string;
  secret_access_key: string;
  permissions: string;
  workspace_id: string | null;
}

const toKey = (row: KeyRow): ObjstoreKey => ({
  accessKeyId: row.access_key_id,
  secretAccessKey: row.secret_access_key,
  permissions: JSON.parse(row.permissions) as ObjstorePermission[],
  workspaceId: row.workspace_id,
});

/** The objstore's key pairs and buckets, kept in the instance database so reset restores them. */
export class ObjstoreKeyStore implements ObjstoreKeyLookup {
  private readonly findStatement;
  private readonly listStatement;
  private readonly bucketsStatement;
  private readonly deleteStatement;

  constructor(private readonly db: Db) {
    this.findStatement = db.prepare<[string], KeyRow>('SELECT * FROM objstore_keys WHERE access_key_id = ?');
    this.listStatement = db.prepare<[], KeyRow>('SELECT * FROM objstore_keys ORDER BY rowid');
    this.bucketsStatement = db.prepare<[], { name: string }>('SELECT name FROM objstore_buckets ORDER BY rowid');
    this.deleteStatement = db.prepare<[string]>('DELETE FROM objstore_keys WHERE access_key_id = ?');
  }

  static insertKey(db: Db, key: ObjstoreKey): void {
    db.prepare(
      'INSERT INTO objstore_keys (access_key_id, secret_access_key, permissions, workspace_id) VALUES (?, ?, ?, ?)',
    ).run(key.accessKeyId, key.secretAccessKey, JSON.stringify(key.permissions), key.workspaceId ?? null);
  }

  static insertBucket(db: Db, name: string): void {
    db.prepare('INSERT INTO objstore_buckets (name) VALUES (?)').run(name);
  }

  /** Adds a key pair at run time; false when the id is taken. */
  add(key: ObjstoreKey): boolean {
    if (this.find(key.accessKeyId)) return false;
    ObjstoreKeyStore.insertKey(this.db, key);
    return true;
  }

  revoke(accessKeyId: string): boolean {
    return this.deleteStatement.run(accessKeyId).changes > 0;
  }

  find(accessKeyId: string): ObjstoreKey | undefined {
    const row = this.findStatement.get(accessKeyId);
    return row && toKey(row);
  }

  list(): ObjstoreKey[] {
    return this.listStatement.all().map(toKey);
  }

  buckets(): string[] {
    return this.bucketsStatement.all().map((row) => row.name);
  }
}
