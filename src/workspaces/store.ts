import type { Db, TableSet } from '../shared/db.ts';
import type { WriteScopedCache } from '../shared/write-scoped-cache.ts';

export const TIERS = ['developer', 'plus', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];
/** The plans with bulk exports. */
export const BULK_EXPORT_TIERS: readonly Tier[] = ['plus', 'enterprise'];

export interface Workspace {
  id: string;
  name: string;
  tier: Tier;
  api_key: string;
}

export const workspaceTables: TableSet = {
  ddl: `
CREATE TABLE IF NOT EXISTS workspaces (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  tier TEXT NOT NULL,
  api_key TEXT NOT NULL UNIQUE
);`,
  seeded: ['workspaces'],
  runtime: [],
  workspaceRows: { workspaces: 'id = ?' },
  columns: { workspaces: { tier: { oneOf: TIERS } } },
};

export class WorkspaceStore {
  private readonly byKey;
  private readonly byIdStatement;
  private readonly allStatement;
  private readonly setTierStatement;

  constructor(
    db: Db,
    /** Every authenticated request looks its key up: answered from here until the database changes. */
    private readonly byKeyCache: WriteScopedCache<Workspace | null>,
  ) {
    this.byKey = db.prepare<[string], Workspace>('SELECT * FROM workspaces WHERE api_key = ?');
    this.byIdStatement = db.prepare<[string], Workspace>('SELECT * FROM workspaces WHERE id = ?');
    this.allStatement = db.prepare<[], Workspace>('SELECT * FROM workspaces ORDER BY rowid');
    this.setTierStatement = db.prepare<[Tier, string]>('UPDATE workspaces SET tier = ? WHERE id = ?');
  }

  static insert(db: Db, workspace: Workspace): void {
    db.prepare('INSERT INTO workspaces (id, name, tier, api_key) VALUES (@id, @name, @tier, @api_key)').run(workspace);
  }

  findByApiKey(apiKey: string): Workspace | undefined {
    let workspace = this.byKeyCache.get(apiKey);
    if (workspace === undefined) this.byKeyCache.set(apiKey, (workspace = this.byKey.get(apiKey) ?? null));
    return workspace ?? undefined;
  }

  find(id: string): Workspace | undefined {
    return this.byIdStatement.get(id);
  }

  list(): Workspace[] {
    return this.allStatement.all();
  }

  setTier(id: string, tier: Tier): boolean {
    return this.setTierStatement.run(tier, id).changes > 0;
  }
}
