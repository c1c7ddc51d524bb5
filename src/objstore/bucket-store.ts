import { valueInWords, type Db, type TableSet } from '../shared/db.ts';
import { isCreatableBucketName, isValidLocationConstraint } from './bucket-directory.ts';
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
  invalidRow(db, schema) {
    const configured = new Set(namesIn(db, schema, 'objstore_buckets'));
    for (const row of db
      .prepare<[], Record<keyof BucketRow, unknown>>(`SELECT * FROM ${schema}.objstore_created_buckets`)
      .iterate()) {
      const problem = invalidBucket(row, configured);
      if (problem !== undefined) return `objstore_created_buckets holds ${problem}`;
    }
    return undefined;
  },
};

/**
 * What is wrong with a created bucket's row, in words. Its name becomes a folder of the store and of the file view: it
 * must be one CreateBucket lets in.
 */
function invalidBucket(
  { name, workspace_id, region, created_at }: Record<keyof BucketRow, unknown>,
  configured: ReadonlySet<unknown>,
): string | undefined {
  if (typeof name !== 'string' || !isCreatableBucketName(name))
    return `the bucket name ${valueInWords(name)}, not a name S3 creates a bucket with`;
  if (configured.has(name)) return `the bucket ${valueInWords(name)}, one of the configured buckets`;
  if (!(workspace_id === null || typeof workspace_id === 'string'))
    return `the workspace id ${valueInWords(workspace_id)}`;
  if (!(region === null || (typeof region === 'string' && isValidLocationConstraint(region))))
    return `the region ${valueInWords(region)}, not a location constraint S3 takes`;
  if (typeof created_at !== 'string' || Number.isNaN(Date.parse(created_at)))
    return `the creation time ${valueInWords(created_at)}`;
  return undefined;
}

const namesIn = (db: Db, schema: string, table: string): unknown[] =>
  db.prepare<[], unknown>(`SELECT name FROM ${schema}.${table}`).pluck().all();

/**
 * The created buckets' names in a schema of the instance database (`snapshot`: a snapshot being restored), once
 * invalidRow has found them usable.
 */
export function createdBucketNames(db: Db, schema: string): string[] {
  return namesIn(db, schema, 'objstore_created_buckets') as string[];
}

interface BucketRow {
  name: string;
  workspace_id: string | null;
  region: string | null;
  created_at: string;
}

const toBucket = (row: BucketRow): CreatedBucket => ({
  name: row.name,
  workspaceId: row.workspace_id,
  region: row.region,
  createdAt: row.created_at,
});

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
