import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileFilter, FilterSyntaxError } from '../../src/tracing/filter.ts';
import { RUN_COLUMNS, RUNS_DDL, type RunRow } from '../../src/tracing/schema.ts';
import { parseTimestamp } from '../../src/shared/time.ts';

const T = (iso: string): number => {
  const micros = parseTimestamp(iso);
  if (micros === null) throw new Error(`bad test timestamp ${iso}`);
  return micros;
};

function run(overrides: Partial<RunRow> & Pick<RunRow, 'id' | 'name' | 'start_time'>): RunRow {
  return {
    tenant_id: 'tenant-1',
    session_id: 'session-1',
    trace_id: overrides.id,
    parent_run_id: null,
    parent_run_ids: '[]',
    reference_example_id: null,
    run_type: 'chain',
    end_time: null,
    status: 'success',
    is_root: 1,
    dotted_order: `20261001T000000000000Z${overrides.id}`,
    trace_tier: null,
    inputs: null,
    outputs: null,
    error: null,
    extra: null,
    events: null,
    tags: null,
    feedback_stats: null,
    total_tokens: null,
    prompt_tokens: null,
    completion_tokens: null,
    total_cost: null,
    prompt_cost: null,
    completion_cost: null,
    first_token_time: null,
    ...overrides,
  };
}

const ROWS: RunRow[] = [
  run({
    id: 'r1',
    name: 'ChatPipeline',
    run_type: 'chain',
    is_root: 1,
    start_time: T('2026-10-01T10:00:00Z'),
    end_time: T('2026-10-01T10:00:02.5Z'),
    tags: '["prod","v1"]',
    total_tokens: 100,
    total_cost: 0.01,
    inputs: '{"question":"What is the Capital of France?"}',
    outputs: '{"answer":"Paris"}',
  }),
  run({
    id: 'r2',
    name: 'ChatModel',
    run_type: 'llm',
    is_root: 0,
    trace_id: 'r1',
    parent_run_id: 'r1',
    parent_run_ids: '["r1"]',
    start_time: T('2026-10-01T10:00:00.5Z'),
    end_time: T('2026-10-01T10:00:01.5Z'),
    first_token_time: T('2026-10-01T10:00:00.8Z'),
    tags: '["prod"]',
    total_tokens: 80,
    total_cost: 0.008,
    inputs: '{"messages":["What is the capital of France?"]}',
    outputs: '{"text":"PARIS is the capital"}',
  }),
  run({
    id: 'r3',
    name: 'search_tool',
    run_type: 'tool',
    is_root: 0,
    trace_id: 'r1',
    status: 'pending',
    parent_run_id: 'r1',
    parent_run_ids: '["r1"]',
    start_time: T('2026-10-01T10:00:01.6Z'),
    end_time: null,
  }),
  run({
    id: 'r4',
    name: 'ChatModel',
    run_type: 'llm',
    is_root: 1,
    status: 'error',
    start_time: T('2026-10-02T12:00:00Z'),
    end_time: T('2026-10-02T12:00:10Z'),
    tags: '["dev","it\'s"]',
    total_tokens: 0,
    total_cost: 0,
    error: 'RateLimitError: Too Many Requests',
  }),
  run({
    id: 'r5',
    name: 'O\'Brien "quoted"',
    run_type: 'chain',
    is_root: 1,
    start_time: T('2026-10-03T00:00:00Z'),
    end_time: T('2026-10-03T00:00:00.2Z'),
    tags: '["x\'); DROP TABLE runs; --"]',
    total_tokens: 5000,
    total_cost: 1.5,
  }),
  run({
    id: 'r6',
    name: 'legacy',
    run_type: 'retriever',
    is_root: 1,
    start_time: T('2026-09-30T23:59:59.999999Z'),
    end_time: T('2026-10-01T00:00:05Z'),
    tags: 'not json', // malformed: must not make has()/eq(tags) fail
  }),
];
const ALL = ROWS.map((r) => r.id).sort();

let db: Database.Database;

beforeAll(() => {
  db = new Database(':memory:');
  db.exec(RUNS_DDL);
  const insert = db.prepare(
    `INSERT INTO runs (${RUN_COLUMNS.join(', ')}) VALUES (${RUN_COLUMNS.map((c) => `@${c}`).join(', ')})`,
  );
  for (const row of ROWS) insert.run(row);
});

afterAll(() => db.close());

function ids(filter: string): string[] {
  const { sql, params } = compileFilter(filter);
  const rows = db.prepare(`SELECT id FROM runs WHERE (${sql}) ORDER BY id`).all(...params) as { id: string }[];
  return rows.map((r) => r.id);
}

function syntaxError(filter: string): FilterSyntaxError {
  try {
    compileFilter(filter);
  } catch (error) {
    expect(error).toBeInstanceOf(FilterSyntaxError);
    return error as FilterSyntaxError;
  }
  throw new Error(`expected FilterSyntaxError for ${JSON.stringify(filter)}`);
}

describe('compileFilter: comparators', () => {
  it('eq / neq on text', () => {
    expect(ids('eq(run_type, "llm")')).toEqual(['r2', 'r4']);
    expect(ids("eq(name, 'ChatModel')")).toEqual(['r2', 'r4']);
    expect(ids('neq(run_type, "llm")')).toEqual(['r1', 'r3', 'r5', 'r6']);
    expect(ids('eq(status, "error")')).toEqual(['r4']);
    expect(ids('eq(trace_id, "r1")')).toEqual(['r1', 'r2', 'r3']);
  });

  it('neq on a nullable column includes NULLs', () => {
    expect(ids('neq(parent_run_id, "r1")')).toEqual(['r1', 'r4', 'r5', 'r6']);
  });

  it('gt / gte / lt / lte on numbers (NULL never matches)', () => {
    expect(ids('gt(total_tokens, 80)')).toEqual(['r1', 'r5']);
    expect(ids('gte(total_tokens, 80)')).toEqual(['r1', 'r2', 'r5']);
    expect(ids('lt(total_tokens, 80)')).toEqual(['r4']);
    expect(ids('lte(total_tokens, 80)')).toEqual(['r2', 'r4']);
    expect(ids('eq(total_tokens, 0)')).toEqual(['r4']);
    expect(ids('gt(total_cost, 0.0095)')).toEqual(['r1', 'r5']);
    expect(ids('gt(total_tokens, -1)')).toEqual(['r1', 'r2', 'r4', 'r5']);
    expect(ids('gt(total_tokens, "99")')).toEqual(['r1', 'r5']);
  });

  it('accepts any run column and the aliases', () => {
    expect(ids('eq(run_id, "r3")')).toEqual(['r3']);
    expect(ids('eq(project_id, "session-1")')).toEqual(ALL);
    expect(ids('eq(tenant_id, "tenant-1")')).toEqual(ALL);
    expect(ids('eq(reference_example_id, null)')).toEqual(ALL);
  });
});

describe('compileFilter: booleans, nulls, latency, times', () => {
  it('is_root true / false', () => {
    expect(ids('eq(is_root, true)')).toEqual(['r1', 'r4', 'r5', 'r6']);
    expect(ids('eq(is_root, false)')).toEqual(['r2', 'r3']);
    expect(ids('neq(is_root, true)')).toEqual(['r2', 'r3']);
    expect(ids('eq(is_root, TRUE)')).toEqual(['r1', 'r4', 'r5', 'r6']);
    expect(syntaxError('gt(is_root, true)').message).toMatch(/boolean field "is_root"/);
    expect(syntaxError('eq(is_root, "yes")').message).toMatch(/true or false/);
  });

  it('eq / neq with null', () => {
    expect(ids('eq(end_time, null)')).toEqual(['r3']);
    expect(ids('neq(end_time, null)')).toEqual(['r1', 'r2', 'r4', 'r5', 'r6']);
    expect(ids('eq(error, null)')).toEqual(['r1', 'r2', 'r3', 'r5', 'r6']);
    expect(ids('neq(error, null)')).toEqual(['r4']);
    expect(ids('eq(tags, null)')).toEqual(['r3']);
    expect(ids('eq(inputs, null)')).toEqual(['r3', 'r4', 'r5', 'r6']);
    expect(syntaxError('gt(total_tokens, null)').message).toMatch(/cannot compare with null/);
  });

  it('latency in seconds', () => {
    expect(ids('gt(latency, 2)')).toEqual(['r1', 'r4', 'r6']);
    expect(ids('lt(latency, 1.5)')).toEqual(['r2', 'r5']);
    expect(ids('gte(latency, 2.5)')).toEqual(['r1', 'r4', 'r6']);
    expect(ids('lte(latency, "1s")')).toEqual(['r2', 'r5']);
    expect(ids('lt(latency, "500ms")')).toEqual(['r5']);
    expect(ids('eq(latency, null)')).toEqual(['r3']);
    // a run still in progress has no latency: it is in neither side of a comparison
    expect(ids('or(gt(latency, 1), lte(latency, 1))')).toEqual(['r1', 'r2', 'r4', 'r5', 'r6']);
    expect(syntaxError('gt(latency, "fast")').message).toMatch(/latency/);
  });

  it('time comparisons with ISO 8601 strings', () => {
    expect(ids('gte(start_time, "2026-10-02T00:00:00Z")')).toEqual(['r4', 'r5']);
    expect(ids('gte(start_time, "2026-10-02T00:00:00")')).toEqual(['r4', 'r5']); // no offset = UTC
    expect(ids('gte(start_time, "2026-10-02T02:00:00+02:00")')).toEqual(['r4', 'r5']);
    expect(ids('lt(start_time, "2026-10-01")')).toEqual(['r6']);
    expect(ids('eq(start_time, "2026-10-01T10:00:00.500000Z")')).toEqual(['r2']);
    expect(ids('and(gt(start_time, "2026-10-01T10:00:00Z"), lt(start_time, "2026-10-02T00:00:00Z"))')).toEqual([
      'r2',
      'r3',
    ]);
    expect(ids('lt(end_time, "2026-10-01T10:00:02Z")')).toEqual(['r2', 'r6']);
    expect(ids('neq(end_time, "2026-10-03T00:00:00.2Z")')).toEqual(['r1', 'r2', 'r3', 'r4', 'r6']);
    expect(ids('gt(first_token_time, "2026-01-01")')).toEqual(['r2']);
  });
});

describe('compileFilter: tags and search', () => {
  it('has() and eq/neq on tags are membership tests', () => {
    expect(ids('has(tags, "prod")')).toEqual(['r1', 'r2']);
    expect(ids('eq(tags, "prod")')).toEqual(['r1', 'r2']);
    expect(ids('has(tags, "v1")')).toEqual(['r1']);
    expect(ids('has(tags, "pro")')).toEqual([]);
    expect(ids("has(tags, 'it\\'s')")).toEqual(['r4']);
    expect(ids('neq(tags, "prod")')).toEqual(['r3', 'r4', 'r5', 'r6']);
    expect(ids('has(parent_run_ids, "r1")')).toEqual(['r2', 'r3']);
    expect(compileFilter('has(tags, "x")').sql).toMatch(/EXISTS \(SELECT 1 FROM json_each\(/);
  });

  it('rejects has() on non-array fields and ordering on tags', () => {
    expect(syntaxError('has(name, "x")').message).toMatch(/array fields/);
    expect(syntaxError('gt(tags, "x")').message).toMatch(/array field "tags"/);
  });

  it('search() is a case-insensitive substring match over name, inputs, outputs, error', () => {
    expect(ids('search("capital of france")')).toEqual(['r1', 'r2']);
    expect(ids('search("paris")')).toEqual(['r1', 'r2']);
    expect(ids('search("chatmodel")')).toEqual(['r2', 'r4']);
    expect(ids('search("too many")')).toEqual(['r4']);
    expect(ids('search("nothing like this")')).toEqual([]);
    expect(ids('search("%")')).toEqual([]); // no LIKE wildcards
    expect(ids('search("_")')).toEqual(['r3']); // literal underscore in search_tool
  });

  it('JSON object fields only compare with null', () => {
    expect(syntaxError('eq(inputs, "x")').message).toMatch(/search/);
  });
});

describe('compileFilter: combinators', () => {
  it('and / or / not, nested', () => {
    expect(ids('and(eq(is_root, true), eq(name, "ChatModel"))')).toEqual(['r4']);
    expect(ids('or(eq(run_type, "tool"), eq(status, "error"))')).toEqual(['r3', 'r4']);
    expect(ids('not(eq(run_type, "llm"))')).toEqual(['r1', 'r3', 'r5', 'r6']);
    expect(ids('and(eq(run_type, "llm"), eq(is_root, false), has(tags, "prod"))')).toEqual(['r2']);
    expect(
      ids('or(and(eq(run_type, "chain"), gt(total_tokens, 1000)), and(eq(run_type, "llm"), not(has(tags, "prod"))))'),
    ).toEqual(['r4', 'r5']);
    expect(ids('not(or(has(tags, "prod"), eq(status, "error")))')).toEqual(['r3', 'r5', 'r6']);
    expect(ids('and(eq(name, "ChatModel"))')).toEqual(['r2', 'r4']);
    expect(ids('or(eq(name, "legacy"))')).toEqual(['r6']);
  });

  it('not() is the exact complement, also around NULLs', () => {
    const filters = [
      'eq(parent_run_id, "r1")',
      'gt(total_tokens, 50)',
      'lt(latency, 3)',
      'has(tags, "prod")',
      'search("paris")',
      'gt(end_time, "2026-10-01T10:00:02Z")',
      'eq(error, null)',
      'neq(trace_tier, "x")',
    ];
    for (const f of filters) {
      const yes = ids(f);
      const no = ids(`not(${f})`);
      expect([...yes, ...no].sort(), f).toEqual(ALL);
      expect(
        yes.filter((id) => no.includes(id)),
        f,
      ).toEqual([]);
    }
    expect(ids('not(eq(parent_run_id, "r1"))')).toEqual(ids('neq(parent_run_id, "r1")'));
  });

  it('tolerates whitespace anywhere between tokens', () => {
    expect(ids('  and (\n\teq ( is_root ,true ) ,eq(  name,"ChatModel"  )\n)  ')).toEqual(['r4']);
  });

  it('qualifies columns with the table alias', () => {
    const { sql, params } = compileFilter(
      'and(eq(run_type, "llm"), has(tags, "prod"), gt(latency, 0.5), search("paris"))',
      'r',
    );
    expect(sql).toMatch(/r\.run_type/);
    expect(sql).toMatch(/json_each\(.*r\.tags/);
    expect(sql).not.toMatch(/(?<![.\w])run_type/);
    const rows = db.prepare(`SELECT r.id FROM runs AS r WHERE (${sql}) ORDER BY r.id`).all(...params);
    expect(rows).toEqual([{ id: 'r2' }]);
    expect(() => compileFilter('eq(name, "x")', 'r; DROP TABLE runs')).toThrow(TypeError);
  });
});

describe('compileFilter: injection safety', () => {
  it('keeps values out of the SQL text', () => {
    const evil = `x" OR 1=1 --`;
    const { sql, params } = compileFilter(`eq(name, "x\\" OR 1=1 --")`);
    expect(params).toEqual([evil]);
    expect(sql).not.toContain('1=1');
    expect(ids(`eq(name, "x\\" OR 1=1 --")`)).toEqual([]);
    expect(ids(`eq(name, 'x\\' OR \\'1\\'=\\'1')`)).toEqual([]);
    expect(compileFilter(`eq(name, 'x\\' OR \\'1\\'=\\'1')`).params).toEqual([`x' OR '1'='1`]);
    expect(ids(`search("'); DROP TABLE runs; --")`)).toEqual([]);
    expect(ids(`has(tags, "x'); DROP TABLE runs; --")`)).toEqual(['r5']);
    expect((db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n).toBe(ROWS.length);
  });

  it('matches values containing quotes exactly', () => {
    expect(ids(`eq(name, "O'Brien \\"quoted\\"")`)).toEqual(['r5']);
    expect(ids(`eq(name, 'O\\'Brien "quoted"')`)).toEqual(['r5']);
    expect(ids(`eq(name, "O\\u0027Brien \\u0022quoted\\u0022")`)).toEqual(['r5']);
  });
});

describe('compileFilter: errors', () => {
  const cases: [string, string, RegExp][] = [
    ['empty string', '', /empty/],
    ['whitespace only', '   ', /empty/],
    ['unbalanced parens (missing close)', 'and(eq(name, "a"), eq(name, "b")', /Missing "\)"/],
    ['unbalanced parens (extra close)', 'eq(name, "a"))', /Unexpected "\)" after the end/],
    ['unknown function', 'like(name, "a")', /Unknown function "like"/],
    ['unknown field', 'eq(nmae, "a")', /Unknown field "nmae"/],
    ['missing argument', 'eq(name)', /Missing argument: eq\(\) takes 2/],
    ['missing value after comma', 'eq(name, )', /Expected an expression but found "\)"/],
    ['too many arguments', 'not(eq(name, "a"), eq(name, "b"))', /Too many arguments/],
    ['trailing garbage', 'eq(name, "a") and', /Unexpected "and" after the end/],
    [
      'bad date',
      'gt(start_time, "2026-02-30T00:00:00Z")',
      /Invalid date-time "2026-02-30T00:00:00Z" for field "start_time"/,
    ],
    ['non-date time value', 'gt(start_time, 5)', /ISO 8601/],
    ['unterminated string', 'eq(name, "abc)', /Unterminated string/],
    ['bare word value', 'eq(run_type, llm)', /bare word "llm"/],
    ['field as string', 'eq("name", "a")', /must be a field name/],
    ['bare value at top level', '"abc"', /Expected a condition/],
    ['empty and()', 'and()', /at least one condition/],
    ['stray character', 'eq(name; "a")', /Unexpected character ";"/],
    ['malformed number', 'gt(total_tokens, 12abc)', /Invalid number/],
    ['non-number for numeric field', 'gt(total_tokens, "lots")', /expects a number/],
  ];
  it.each(cases)('%s', (_label, filter, pattern) => {
    const error = syntaxError(filter);
    expect(error.message).toMatch(pattern);
    if (filter.trim() !== '') expect(error.message).toMatch(/at position \d+/);
  });

  it('reports the character position of the problem', () => {
    expect(syntaxError('and(eq(name, "a"), eq(nmae, "b"))').position).toBe(22);
    expect(syntaxError('eq(name, "a") x').position).toBe(14);
    expect(syntaxError('eq(name, "abc').position).toBe(9);
  });

  it('limits length and nesting depth', () => {
    const long = `eq(name, "${'a'.repeat(10_000)}")`;
    expect(syntaxError(long).message).toMatch(/limit is 10000/);
    const nest = (n: number) => 'not('.repeat(n - 1) + 'eq(name, "a")' + ')'.repeat(n - 1);
    expect(() => compileFilter(nest(50))).not.toThrow();
    expect(syntaxError(nest(51)).message).toMatch(/nested more than 50/);
    expect(syntaxError('not('.repeat(2000)).message).toMatch(/nested more than 50/);
  });
});
