import type { Db, TableSet } from '../shared/db.ts';
import type { CreatedBucket, ObjstoreBucketRegistry } from './types.ts';

/**
 * Buckets created over the S3 API, kept in the instance database: a reset drops them, a
 * one-workspace reset drops that workspace's, a snapshot and a kept --data-dir keep them.
 */
export const createdBucketTables: TableSet = {
  ddl: `
CREATE TABLE IF NOT EXISTS objstore_created_buckets (
  name TEXT PRIMARY KEY,
  workspace_id TEXT,
  region TEXT,
  created_at TEXT NOT NULL
);`,
  seeded: [],
  runtime: ['objstore_created_buckets'],
  workspaceRows: { objstore_created_buckets: 'workspace_id = ?' },
};

interface BucketRow {
  name: string;
  workspace_id: string | null;
  region: string | null;
  created_at: string;
}

const toBucket = (row: BucketRow): CreatedBucket => ({ name: row.name, workspaceId: row.workspace_id, region: row.region, createdAt: row.created_at });

export class ObjstoreBucketStore implements ObjstoreBucketRegistry {
  private readonly findStatement;
  private readonly listStatement;
  private readonly insertStatement;
  private readonly deleteStatement;
  private readonly clearStatement;

  /** `now`: the emulator clock, in epoch milliseconds, for creation dates. */
  constructor(
    db: Db,
    private readonly now: () => number,
  ) {
    this.findStatement = db.prepare<[string], BucketRow>('SELECT * FROM objstore_created_buckets WHERE name = ?');
    this.listStatement = db.prepare<[], BucketRow>('SELECT * FROM objstore_created_buckets ORDER BY rowid');
    this.insertStatement = db.prepare<[string, string | null, string | null, string]>(
      'INSERT OR IGNORE INTO objstore_created_buckets (name, workspace_id, region, created_at) VALUES (?, ?, ?, ?)',
    );
    this.deleteStatement = db.prepare<[string]>('DELETE FROM objstore_created_buckets WHERE name = ?');
    this.clearStatement = db.prepare('DELETE FROM objstore_created_buckets');
  }

  find(name: string): CreatedBucket | undefined {
    const row = this.findStatement.get(name);
    return row && toBucket(row);
  }

  add(bucket: Omit<CreatedBucket, 'createdAt'>): boolean {
    const createdAt = new Date(this.now()).toISOString();
    return this.insertStatement.run(bucket.name, bucket.workspaceId, bucket.region, createdAt).changes > 0;
  }

  remove(name: string): void {
    this.deleteStatement.run(name);
  }

  list(): CreatedBucket[] {
    return this.listStatement.all().map(toBucket);
  }

  clear(): void {
    this.clearStatement.run();
  }
}
