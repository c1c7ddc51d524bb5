import type { Micros } from '../shared/time.ts';

/**
 * A traced run, stored the way the exporter reads it: times in microseconds since the
 * epoch (UTC), JSON-valued fields as JSON text, booleans as 0/1.
 */
export interface RunRow {
  id: string;
  tenant_id: string;
  session_id: string;
  trace_id: string;
  parent_run_id: string | null;
  /** JSON array of ancestor run ids, root first. */
  parent_run_ids: string;
  reference_example_id: string | null;
  name: string;
  run_type: 'chain' | 'llm' | 'tool' | 'retriever' | 'prompt' | 'parser' | 'embedding';
  start_time: Micros;
  end_time: Micros | null;
  status: 'success' | 'error' | 'pending';
  is_root: 0 | 1;
  dotted_order: string;
  trace_tier: string | null;
  inputs: string | null;
  outputs: string | null;
  error: string | null;
  extra: string | null;
  events: string | null;
  /** JSON array of strings. */
  tags: string | null;
  feedback_stats: string | null;
  total_tokens: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_cost: number | null;
  prompt_cost: number | null;
  completion_cost: number | null;
  first_token_time: Micros | null;
}

/** The 29 exported columns, in the order the real service writes them. */
export const RUN_COLUMNS = [
  'id',
  'tenant_id',
  'session_id',
  'trace_id',
  'parent_run_id',
  'parent_run_ids',
  'reference_example_id',
  'name',
  'run_type',
  'start_time',
  'end_time',
  'status',
  'is_root',
  'dotted_order',
  'trace_tier',
  'inputs',
  'outputs',
  'error',
  'extra',
  'events',
  'tags',
  'feedback_stats',
  'total_tokens',
  'prompt_tokens',
  'completion_tokens',
  'total_cost',
  'prompt_cost',
  'completion_cost',
  'first_token_time',
] as const satisfies readonly (keyof RunRow)[];

export type RunColumn = (typeof RUN_COLUMNS)[number];

/** What a column holds: text, or a number (stored as INTEGER or REAL) of one of these kinds. */
export type RunColumnKind = 'string' | 'timestamp' | 'bool' | 'int64' | 'float64';

export const RUN_COLUMN_KINDS: Record<RunColumn, RunColumnKind> = {
  id: 'string',
  tenant_id: 'string',
  session_id: 'string',
  trace_id: 'string',
  parent_run_id: 'string',
  parent_run_ids: 'string',
  reference_example_id: 'string',
  name: 'string',
  run_type: 'string',
  start_time: 'timestamp',
  end_time: 'timestamp',
  status: 'string',
  is_root: 'bool',
  dotted_order: 'string',
  trace_tier: 'string',
  inputs: 'string',
  outputs: 'string',
  error: 'string',
  extra: 'string',
  events: 'string',
  tags: 'string',
  feedback_stats: 'string',
  total_tokens: 'int64',
  prompt_tokens: 'int64',
  completion_tokens: 'int64',
  total_cost: 'float64',
  prompt_cost: 'float64',
  completion_cost: 'float64',
  first_token_time: 'timestamp',
};

/** The columns stored as numbers; the others hold text. */
export const NUMBER_RUN_COLUMNS: ReadonlySet<RunColumn> = new Set(
  RUN_COLUMNS.filter((column) => RUN_COLUMN_KINDS[column] !== 'string'),
);

export const RUNS_DDL = `
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  trace_id TEXT NOT NULL,
  parent_run_id TEXT,
  parent_run_ids TEXT NOT NULL,
  reference_example_id TEXT,
  name TEXT NOT NULL,
  run_type TEXT NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER,
  status TEXT NOT NULL,
  is_root INTEGER NOT NULL,
  dotted_order TEXT NOT NULL,
  trace_tier TEXT,
  inputs TEXT,
  outputs TEXT,
  error TEXT,
  extra TEXT,
  events TEXT,
  tags TEXT,
  feedback_stats TEXT,
  total_tokens INTEGER,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  total_cost REAL,
  prompt_cost REAL,
  completion_cost REAL,
  first_token_time INTEGER
);
CREATE INDEX IF NOT EXISTS runs_by_session_time ON runs (session_id, start_time, id);
`;
