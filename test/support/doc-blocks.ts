import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './cli.ts';

/**
 * How the doc checker (test/project/doc-blocks.test.ts) treats a fenced block: the `<!-- check: ... -->` lines right
 * above it, each `<kind>[, exit <code>]: <argument>`.
 * - `run`: the block is a shell script; it runs and exits 0. With an argument, the argument runs instead (the block's
 *   text in `$BLOCK`): the form the page gives beside it, or what sends the block.
 * - `starts`: the block (or the argument) starts localplane: it prints the ready line, and is stopped then.
 * - `output`: the argument is a command; what it prints (stdout, then stderr) is the block.
 * - `output-line`: one per line of the block, in order: each command prints that line alone.
 * - `json`, `shape`: the argument is a command printing JSON (without one, the block that ran last), equal to the block
 *   (`json`: `"..."` for any value, a `"..."` key for any other keys) or of its shape (`shape`: values of its types).
 * - `file`: the block is written to the file the argument names, in the page's working folder.
 * - `ts`: the block runs as a module through tsx, `localplane` imported as installed (this checkout), after the
 *   argument (what the page leaves to the reader, such as an API key).
 * - `covered`: another test file (the argument) runs what the block shows.
 * - `skip`: the block cannot run here; the argument says why.
 * `, stdout` or `, stderr` after the kind compares what the command printed there alone.
 * A `sh` block without a marker is `run`; any other block needs one.
 */
export type CheckKind =
  'run' | 'starts' | 'output' | 'output-line' | 'json' | 'shape' | 'file' | 'ts' | 'covered' | 'skip';

export interface Check {
  kind: CheckKind;
  argument: string;
  /** The exit code the command must end with; 0 unless the marker says. */
  exit: number;
  /** What of the command's output is compared: `, stdout` or `, stderr` in the marker says one alone. */
  stream: 'stdout' | 'stderr' | 'both';
}

export interface DocBlock {
  file: string;
  /** The line of the opening fence, from 1. */
  line: number;
  language: string;
  text: string;
  checks: Check[];
}

const MARKER = /^<!-- check: ([a-z-]+)(?:, exit (\d+))?(?:, (stdout|stderr))?(?:: (.*?))? -->$/;
const KINDS = new Set<string>([
  'run',
  'starts',
  'output',
  'output-line',
  'json',
  'shape',
  'file',
  'ts',
  'covered',
  'skip',
]);

export const DOC_FILES = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** The fenced blocks of a page with their markers; throws on a marker it cannot read. */
export function docBlocks(file: string): DocBlock[] {
  const lines = readFileSync(join(REPO_ROOT, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let index = 0; index < lines.length; index++) {
    const fence = /^```(\S*)$/.exec(lines[index]!);
    if (!fence) continue;
    const end = lines.findIndex((line, at) => at > index && line === '```');
    if (end < 0) throw new Error(`${file}:${index + 1}: a fence that is never closed`);
    const checks: Check[] = [];
    for (let above = index - 1; above >= 0 && lines[above]!.startsWith('<!-- check:'); above--) {
      const marker = MARKER.exec(lines[above]!);
      if (!marker || !KINDS.has(marker[1]!)) throw new Error(`${file}:${above + 1}: a marker the checker cannot read`);
      checks.unshift({
        kind: marker[1] as CheckKind,
        argument: marker[4] ?? '',
        exit: Number(marker[2] ?? 0),
        stream: (marker[3] as 'stdout' | 'stderr' | undefined) ?? 'both',
      });
    }
    if (checks.length === 0 && fence[1] === 'sh') checks.push({ kind: 'run', argument: '', exit: 0, stream: 'both' });
    blocks.push({
      file,
      line: index + 1,
      language: fence[1]!,
      text: lines.slice(index + 1, end).join('\n'),
      checks,
    });
    index = end;
  }
  return blocks;
}

export const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `actual` equals a doc's line, where `…` or `...` in the doc stands for any text. */
export function lineMatches(doc: string, actual: string): boolean {
  const pattern = doc
    .split(/…|\.\.\./)
    .map(escapeRegExp)
    .join('.*');
  return new RegExp(`^${pattern}$`, 's').test(actual);
}

/**
 * Whether `actual` has the shape the doc shows: an object the doc's keys (and no others, unless the doc has a `"..."`
 * key), each value of its shape; an array whose items each have the shape of the doc's item at that place or its last;
 * a value of the doc's type, or anything where the doc shows `"..."`. With `exact`, values must be equal too.
 * Answers the first place that differs, or undefined.
 */
export function shapeDiffers(doc: unknown, actual: unknown, exact: boolean, at = '$'): string | undefined {
  if (doc === '...' || doc === '…') return undefined;
  if (Array.isArray(doc)) {
    if (!Array.isArray(actual)) return `${at}: an array in the doc, ${JSON.stringify(actual)?.slice(0, 80)} here`;
    if (doc.length === 0)
      return actual.length === 0 ? undefined : `${at}: empty in the doc, ${actual.length} items here`;
    if (exact && !doc.includes('...') && doc.length !== actual.length)
      return `${at}: ${doc.length} items in the doc, ${actual.length} here`;
    if (actual.length === 0) return `${at}: items in the doc, none here`;
    for (const [index, item] of actual.entries()) {
      const differs = shapeDiffers(doc[Math.min(index, doc.length - 1)], item, exact, `${at}[${index}]`);
      if (differs) return differs;
    }
    return undefined;
  }
  if (doc !== null && typeof doc === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return `${at}: an object in the doc, ${JSON.stringify(actual)?.slice(0, 80)} here`;
    const open = '...' in doc;
    for (const key of Object.keys(actual)) if (!open && !(key in doc)) return `${at}.${key}: not in the doc`;
    for (const [key, value] of Object.entries(doc)) {
      if (key === '...') continue;
      if (!(key in actual)) return `${at}.${key}: in the doc, missing here`;
      const differs = shapeDiffers(value, (actual as Record<string, unknown>)[key], exact, `${at}.${key}`);
      if (differs) return differs;
    }
    return undefined;
  }
  const type = (value: unknown) => (value === null ? 'null' : typeof value);
  if (type(doc) !== type(actual)) return `${at}: ${type(doc)} in the doc, ${type(actual)} here`;
  if (exact && doc !== actual) return `${at}: ${JSON.stringify(doc)} in the doc, ${JSON.stringify(actual)} here`;
  return undefined;
}
