/**
 * Compiler from the hosted service's trace filter language to a parameterised SQLite
 * boolean expression over the `runs` table (see schema.ts).
 *
 *   and(eq(is_root, true), eq(name, "ChatModel"), gt(latency, 2.5), has(tags, "prod"))
 *
 * Design notes:
 * - Every value becomes a `?` parameter; field names are whitelisted and the only
 *   identifiers that reach the SQL text (plus a validated table alias).
 * - Every compiled predicate is two-valued (never SQL NULL), so `not(x)` is the exact
 *   complement of `x`: a comparison against a NULL column is false, `neq(f, v)` is
 *   true when `f` is NULL, and `not(eq(f, v))` equals `neq(f, v)`.
 * - Error positions are 0-based character offsets into the filter text.
 */
import { parseTimestamp } from '../shared/time.ts';
import { RUN_COLUMNS, type RunColumn } from './schema.ts';

export class FilterSyntaxError extends Error {
  /** 0-based character offset in the filter text the error refers to, when known. */
  readonly position: number | undefined;
  constructor(message: string, position?: number) {
    super(position === undefined ? message : `${message} at position ${position}`);
    this.name = 'FilterSyntaxError';
    this.position = position;
  }
}

export interface CompiledFilter {
  sql: string;
  params: (string | number)[];
}

export const MAX_FILTER_LENGTH = 10_000;
export const MAX_FILTER_DEPTH = 50;

// ---------------------------------------------------------------------------------
// Fields

type FieldKind =
  | 'text' // plain TEXT column
  | 'time' // INTEGER microseconds, compared with ISO 8601 strings
  | 'number' // INTEGER/REAL counts and costs
  | 'bool' // INTEGER 0/1
  | 'array' // JSON array text (membership via eq/neq/has)
  | 'json' // other JSON text (only null checks; use search())
  | 'latency'; // computed: (end_time - start_time) seconds

interface FieldInfo {
  kind: FieldKind;
  /** The underlying column (for latency: unused). */
  column: RunColumn;
}

const COLUMN_KINDS: Record<RunColumn, FieldKind> = {
  id: 'text',
  tenant_id: 'text',
  session_id: 'text',
  trace_id: 'text',
  parent_run_id: 'text',
  parent_run_ids: 'array',
  reference_example_id: 'text',
  name: 'text',
  run_type: 'text',
  start_time: 'time',
  end_time: 'time',
  status: 'text',
  is_root: 'bool',
  dotted_order: 'text',
  trace_tier: 'text',
  inputs: 'json',
  outputs: 'json',
  error: 'text',
  extra: 'json',
  events: 'json',
  tags: 'array',
  feedback_stats: 'json',
  total_tokens: 'number',
  prompt_tokens: 'number',
  completion_tokens: 'number',
  total_cost: 'number',
  prompt_cost: 'number',
  completion_cost: 'number',
  first_token_time: 'time',
};

const FIELDS = new Map<string, FieldInfo>();
for (const column of RUN_COLUMNS) FIELDS.set(column, { kind: COLUMN_KINDS[column], column });
// Aliases.
FIELDS.set('latency', { kind: 'latency', column: 'start_time' });
FIELDS.set('run_id', { kind: 'text', column: 'id' });
FIELDS.set('project_id', { kind: 'text', column: 'session_id' });

/** Columns declared NOT NULL in RUNS_DDL: comparisons on them need no NULL guard. */
const NOT_NULL_COLUMNS: ReadonlySet<RunColumn> = new Set<RunColumn>([
  'id',
  'tenant_id',
  'session_id',
  'trace_id',
  'parent_run_ids',
  'name',
  'run_type',
  'start_time',
  'status',
  'is_root',
  'dotted_order',
]);

/** Field names the filter language accepts (columns and aliases). */
export const FILTER_FIELDS: readonly string[] = [...FIELDS.keys()];

/** Columns `search("...")` looks in. */
const SEARCH_COLUMNS: readonly RunColumn[] = ['name', 'inputs', 'outputs', 'error'];

// ---------------------------------------------------------------------------------
// Tokens

type Token =
  | { type: 'ident'; value: string; pos: number }
  | { type: 'string'; value: string; pos: number }
  | { type: 'number'; value: number; text: string; pos: number }
  | { type: '(' | ')' | ','; pos: number }
  | { type: 'eof'; pos: number };

const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_.]/;
const NUMBER_AT = /-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const SIMPLE_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  b: '\b',
  f: '\f',
  v: '\v',
  '0': '\0',
};

function describe(token: Token): string {
  switch (token.type) {
    case 'eof':
      return 'end of input';
    case 'ident':
      return `"${token.value}"`;
    case 'string':
      return `string ${JSON.stringify(token.value)}`;
    case 'number':
      return `number ${token.text}`;
    default:
      return `"${token.type}"`;
  }
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (ch === '(' || ch === ')' || ch === ',') {
      tokens.push({ type: ch, pos: i });
      i++;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const start = i;
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new FilterSyntaxError('Unterminated string starting', start);
        const c = text[i]!;
        if (c === ch) {
          i++;
          break;
        }
        if (c === '\\') {
          if (i + 1 >= text.length) throw new FilterSyntaxError('Unterminated string starting', start);
          const e = text[i + 1]!;
          if (e === 'u') {
            const hex = text.slice(i + 2, i + 6);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new FilterSyntaxError('Invalid \\u escape in string', i);
            value += String.fromCharCode(parseInt(hex, 16));
            i += 6;
          } else {
            value += SIMPLE_ESCAPES[e] ?? e; // \" \' \\ \/ and any other char stand for themselves
            i += 2;
          }
          continue;
        }
        value += c;
        i++;
      }
      tokens.push({ type: 'string', value, pos: start });
      continue;
    }
    if (ch === '-' || ch === '.' || (ch >= '0' && ch <= '9')) {
      NUMBER_AT.lastIndex = i;
      const m = NUMBER_AT.exec(text);
      if (!m) throw new FilterSyntaxError(`Unexpected character ${JSON.stringify(ch)}`, i);
      const end = i + m[0].length;
      if (end < text.length && IDENT_PART.test(text[end]!)) {
        throw new FilterSyntaxError(`Invalid number ${JSON.stringify(text.slice(i, end + 1))}`, i);
      }
      tokens.push({ type: 'number', value: Number(m[0]), text: m[0], pos: i });
      i = end;
      continue;
    }
    if (IDENT_START.test(ch)) {
      const start = i;
      while (i < text.length && IDENT_PART.test(text[i]!)) i++;
      tokens.push({ type: 'ident', value: text.slice(start, i), pos: start });
      continue;
    }
    throw new FilterSyntaxError(`Unexpected character ${JSON.stringify(ch)}`, i);
  }
  tokens.push({ type: 'eof', pos: text.length });
  return tokens;
}

// ---------------------------------------------------------------------------------
// Syntax tree

type Literal = string | number | boolean | null;

type FilterNode =
  | { type: 'call'; name: string; args: FilterNode[]; pos: number; end: number }
  | { type: 'ident'; name: string; pos: number }
  | { type: 'literal'; value: Literal; pos: number };

class Parser {
  private index = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.index]!;
  }
  private next(): Token {
    return this.tokens[this.index++]!;
  }

  parseFilter(): FilterNode {
    const node = this.parseExpr(1);
    const rest = this.peek();
    if (rest.type !== 'eof') {
      throw new FilterSyntaxError(`Unexpected ${describe(rest)} after the end of the expression`, rest.pos);
    }
    return node;
  }

  private parseExpr(depth: number): FilterNode {
    const token = this.next();
    switch (token.type) {
      case 'string':
        return { type: 'literal', value: token.value, pos: token.pos };
      case 'number':
        return { type: 'literal', value: token.value, pos: token.pos };
      case 'ident': {
        if (this.peek().type === '(') return this.parseCall(token.value, token.pos, depth);
        const lower = token.value.toLowerCase();
        if (lower === 'true') return { type: 'literal', value: true, pos: token.pos };
        if (lower === 'false') return { type: 'literal', value: false, pos: token.pos };
        if (lower === 'null') return { type: 'literal', value: null, pos: token.pos };
        return { type: 'ident', name: token.value, pos: token.pos };
      }
      default:
        throw new FilterSyntaxError(`Expected an expression but found ${describe(token)}`, token.pos);
    }
  }

  private parseCall(name: string, pos: number, depth: number): FilterNode {
    if (depth > MAX_FILTER_DEPTH) {
      throw new FilterSyntaxError(`Filter is nested more than ${MAX_FILTER_DEPTH} levels deep`, pos);
    }
    this.next(); // '('
    const args: FilterNode[] = [];
    if (this.peek().type === ')') {
      return { type: 'call', name, args, pos, end: this.next().pos };
    }
    for (;;) {
      args.push(this.parseExpr(depth + 1));
      const sep = this.next();
      if (sep.type === ')') return { type: 'call', name, args, pos, end: sep.pos };
      if (sep.type !== ',') {
        const what =
          sep.type === 'eof'
            ? `missing ")" to close ${name}(`
            : `expected "," or ")" in ${name}(...) but found ${describe(sep)}`;
        throw new FilterSyntaxError(what.charAt(0).toUpperCase() + what.slice(1), sep.pos);
      }
    }
  }
}

// ---------------------------------------------------------------------------------
// Compilation

type Comparator = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte';
const COMPARATORS: Record<Comparator, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };
const FUNCTIONS = ['and', 'or', 'not', 'eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'has', 'search'];

const ALIAS_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

class Compiler {
  readonly params: (string | number)[] = [];
  constructor(private readonly alias: string | undefined) {}

  private col(column: RunColumn): string {
    return this.alias ? `${this.alias}.${column}` : column;
  }

  /** The column reference when the column may hold NULL, else null. */
  private nullable(column: RunColumn): string | null {
    return NOT_NULL_COLUMNS.has(column) ? null : this.col(column);
  }

  private param(value: string | number): string {
    this.params.push(value);
    return '?';
  }

  compile(node: FilterNode): string {
    if (node.type !== 'call') {
      throw new FilterSyntaxError(
        'Expected a condition such as eq(field, value), and(...), or(...), not(...)',
        node.pos,
      );
    }
    const fn = node.name.toLowerCase();
    switch (fn) {
      case 'and':
      case 'or': {
        if (node.args.length === 0) throw new FilterSyntaxError(`${fn}() needs at least one condition`, node.pos);
        const parts = node.args.map((arg) => this.compile(arg));
        return parts.length === 1 ? parts[0]! : `(${parts.join(fn === 'and' ? ' AND ' : ' OR ')})`;
      }
      case 'not': {
        this.arity(node, 1, 'not(condition)');
        return `(NOT ${this.compile(node.args[0]!)})`;
      }
      case 'eq':
      case 'neq':
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte': {
        this.arity(node, 2, `${fn}(field, value)`);
        const field = this.field(node.args[0]!, fn);
        return this.comparison(fn, field, this.literal(node.args[1]!, fn));
      }
      case 'has': {
        this.arity(node, 2, 'has(field, value)');
        const field = this.field(node.args[0]!, fn);
        if (field.info.kind !== 'array') {
          throw new FilterSyntaxError(
            `has() applies to array fields (tags, parent_run_ids), not "${field.name}"`,
            node.args[0]!.pos,
          );
        }
        const value = this.literal(node.args[1]!, fn);
        return this.membership(field.info.column, this.arrayElement(value, field.name));
      }
      case 'search': {
        this.arity(node, 1, 'search("text")');
        const value = this.literal(node.args[0]!, fn);
        if (typeof value.value !== 'string') {
          throw new FilterSyntaxError('search() needs a string', value.pos);
        }
        // SQLite's lower() folds ASCII only, so fold the needle the same way.
        const needle = value.value.replace(/[A-Z]/g, (c) => c.toLowerCase());
        const parts = SEARCH_COLUMNS.map((c) => `coalesce(instr(lower(${this.col(c)}), ${this.param(needle)}), 0) > 0`);
        return `(${parts.join(' OR ')})`;
      }
      default:
        throw new FilterSyntaxError(
          `Unknown function "${node.name}" (expected one of ${FUNCTIONS.join(', ')})`,
          node.pos,
        );
    }
  }

  private arity(node: Extract<FilterNode, { type: 'call' }>, count: number, usage: string): void {
    if (node.args.length < count) {
      throw new FilterSyntaxError(`Missing argument: ${node.name}() takes ${count} (${usage})`, node.end);
    }
    if (node.args.length > count) {
      throw new FilterSyntaxError(
        `Too many arguments: ${node.name}() takes ${count} (${usage})`,
        node.args[count]!.pos,
      );
    }
  }

  private field(node: FilterNode, fn: string): { name: string; info: FieldInfo } {
    if (node.type !== 'ident') {
      throw new FilterSyntaxError(`The first argument of ${fn}() must be a field name such as run_type`, node.pos);
    }
    const info = FIELDS.get(node.name.toLowerCase());
    if (!info) {
      throw new FilterSyntaxError(`Unknown field "${node.name}" (supported: ${FILTER_FIELDS.join(', ')})`, node.pos);
    }
    return { name: node.name.toLowerCase(), info };
  }

  private literal(node: FilterNode, fn: string): { value: Literal; pos: number } {
    if (node.type === 'literal') return { value: node.value, pos: node.pos };
    if (node.type === 'ident') {
      throw new FilterSyntaxError(
        `Expected a value in ${fn}() but found the bare word "${node.name}" (quote strings, e.g. "${node.name}")`,
        node.pos,
      );
    }
    throw new FilterSyntaxError(`Expected a value in ${fn}() but found a function call`, node.pos);
  }

  private comparison(
    fn: Comparator,
    field: { name: string; info: FieldInfo },
    value: { value: Literal; pos: number },
  ): string {
    const { kind, column } = field.info;
    const ordering = fn !== 'eq' && fn !== 'neq';

    if (value.value === null) {
      if (ordering) throw new FilterSyntaxError(`${fn}() cannot compare with null; use eq or neq`, value.pos);
      const target = kind === 'latency' ? this.col('end_time') : this.col(column);
      return `${target} ${fn === 'eq' ? 'IS NULL' : 'IS NOT NULL'}`;
    }

    switch (kind) {
      case 'array': {
        if (ordering)
          throw new FilterSyntaxError(
            `${fn}() is not supported for array field "${field.name}"; use eq, neq or has`,
            value.pos,
          );
        const member = this.membership(column, this.arrayElement(value, field.name));
        return fn === 'eq' ? member : `(NOT ${member})`;
      }
      case 'json':
        throw new FilterSyntaxError(
          `Field "${field.name}" can only be compared with null; use search("...") to match its contents`,
          value.pos,
        );
      case 'bool': {
        if (ordering)
          throw new FilterSyntaxError(`${fn}() is not supported for boolean field "${field.name}"`, value.pos);
        return this.compare(fn, this.col(column), this.param(this.toBool(value, field.name)), this.nullable(column));
      }
      case 'time':
        return this.compare(fn, this.col(column), this.param(this.toMicros(value, field.name)), this.nullable(column));
      case 'number':
        return this.compare(fn, this.col(column), this.param(this.toNumber(value, field.name)), this.nullable(column));
      case 'latency': {
        const seconds = this.toSeconds(value);
        const expr = `((${this.col('end_time')} - ${this.col('start_time')}) / 1000000.0)`;
        return this.compare(fn, expr, this.param(seconds), this.col('end_time'));
      }
      case 'text': {
        if (typeof value.value === 'boolean') {
          throw new FilterSyntaxError(`Field "${field.name}" expects a string, not ${value.value}`, value.pos);
        }
        return this.compare(fn, this.col(column), this.param(String(value.value)), this.nullable(column));
      }
    }
  }

  /**
   * A two-valued comparison of a possibly-NULL expression with a non-NULL parameter.
   * `nullable` names the column whose NULL makes `expr` NULL (defaults to `expr`; null
   * when the column is NOT NULL in the schema, so a plain comparison suffices).
   */
  private compare(fn: Comparator, expr: string, placeholder: string, nullable: string | null = expr): string {
    if (nullable === null) return `${expr} ${COMPARATORS[fn]} ${placeholder}`;
    if (fn === 'eq')
      return nullable === expr ? `${expr} IS ${placeholder}` : `(${nullable} IS NOT NULL AND ${expr} = ${placeholder})`;
    if (fn === 'neq')
      return nullable === expr ? `${expr} IS NOT ${placeholder}` : `(${nullable} IS NULL OR ${expr} <> ${placeholder})`;
    return `(${nullable} IS NOT NULL AND ${expr} ${COMPARATORS[fn]} ${placeholder})`;
  }

  /** EXISTS over the elements of a JSON-array column; malformed or non-array text has no elements. */
  private membership(column: RunColumn, element: string | number): string {
    const c = this.col(column);
    const source = `CASE WHEN json_valid(${c}) THEN CASE json_type(${c}) WHEN 'array' THEN ${c} END END`;
    return `EXISTS (SELECT 1 FROM json_each(${source}) AS lp_elem WHERE lp_elem.value = ${this.param(element)})`;
  }

  private arrayElement(value: { value: Literal; pos: number }, name: string): string | number {
    if (typeof value.value === 'string' || typeof value.value === 'number') return value.value;
    throw new FilterSyntaxError(`Field "${name}" membership needs a string value`, value.pos);
  }

  private toBool(value: { value: Literal; pos: number }, name: string): number {
    const v = value.value;
    if (v === true || v === 1 || v === 'true') return 1;
    if (v === false || v === 0 || v === 'false') return 0;
    throw new FilterSyntaxError(`Field "${name}" expects true or false`, value.pos);
  }

  private toMicros(value: { value: Literal; pos: number }, name: string): number {
    if (typeof value.value !== 'string') {
      throw new FilterSyntaxError(
        `Field "${name}" expects an ISO 8601 date-time string such as "2026-10-02T00:00:00Z"`,
        value.pos,
      );
    }
    const micros = parseTimestamp(value.value);
    if (micros === null) {
      throw new FilterSyntaxError(`Invalid date-time ${JSON.stringify(value.value)} for field "${name}"`, value.pos);
    }
    return micros;
  }

  private toNumber(value: { value: Literal; pos: number }, name: string): number {
    const v = value.value;
    if (typeof v === 'number') return v;
    if (typeof v === 'string' && /^\s*-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/.test(v)) return Number(v);
    throw new FilterSyntaxError(`Field "${name}" expects a number`, value.pos);
  }

  /** Latency in seconds: a number, or a string such as "2.5", "2.5s", "500ms", "1m", "1h". */
  private toSeconds(value: { value: Literal; pos: number }): number {
    const v = value.value;
    if (typeof v === 'number') return v;
    if (typeof v === 'string') {
      const m = /^\s*(-?(?:\d+(?:\.\d*)?|\.\d+))\s*(ms|s|m|h)?\s*$/i.exec(v);
      if (m) {
        const scale = { ms: 0.001, s: 1, m: 60, h: 3600 }[(m[2] ?? 's').toLowerCase() as 'ms' | 's' | 'm' | 'h'];
        return Number(m[1]) * scale;
      }
    }
    throw new FilterSyntaxError('Field "latency" expects seconds, e.g. 2.5 or "2.5s" or "500ms"', value.pos);
  }
}

/**
 * Parses `text`, e.g. `and(eq(is_root, true), eq(name, "ChatModel"))`, and returns SQL
 * usable as `WHERE (<sql>)` with `?` placeholders. The column references are unqualified
 * (`run_type`, `start_time`, ...) unless `tableAlias` is given, then `alias.column`.
 * Throws FilterSyntaxError for anything unparsable or unsupported.
 */
export function compileFilter(text: string, tableAlias?: string): CompiledFilter {
  if (tableAlias !== undefined && !ALIAS_PATTERN.test(tableAlias)) {
    throw new TypeError(`Invalid table alias ${JSON.stringify(tableAlias)}`);
  }
  if (typeof text !== 'string') throw new FilterSyntaxError('Filter must be a string');
  if (text.length > MAX_FILTER_LENGTH) {
    throw new FilterSyntaxError(`Filter is ${text.length} characters long; the limit is ${MAX_FILTER_LENGTH}`);
  }
  if (text.trim() === '') throw new FilterSyntaxError('Filter is empty', 0);
  const tree = new Parser(tokenize(text)).parseFilter();
  const compiler = new Compiler(tableAlias);
  const sql = compiler.compile(tree);
  return { sql, params: compiler.params };
}
