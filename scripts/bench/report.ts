/** What the row groups share: medians, number formats, the table and the machine's description. */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, release } from 'node:os';

/**
 * One line of the table: localplane's figure beside a peer's from the same run, or beside a goal where there is no
 * peer.
 */
export interface Row {
  what: string;
  localplane: string;
  /** The peer measured in the same run, or `none: goal` for rows compared with their goal alone. */
  peer: string;
  peerFigure: string;
  ratio: string;
  goal: string;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

export const milliseconds = (value: number) =>
  `${value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : Math.round(value).toLocaleString('en')} ms`;
export const perSecond = (value: number) => `${Math.round(value).toLocaleString('en')}/s`;
export const megabytes = (bytes: number) =>
  `${bytes < 10 * 1024 * 1024 ? (bytes / 1024 / 1024).toFixed(1) : Math.round(bytes / 1024 / 1024)} MB`;
export const times = (ratio: number) => `${ratio < 1 ? ratio.toFixed(2) : ratio.toFixed(1)}×`;
export const percent = (ratio: number) => `${Math.round(ratio * 100)}%`;
/** The median with the range of the runs, e.g. `1,315 ms (1,044–1,446)`. */
export function medianAndRange(values: readonly number[], format: (value: number) => string): string {
  const bare = (value: number) => format(value).replace(/ ms$|\/s$| MB$/, '');
  return `${format(median(values))} (${bare(Math.min(...values))}–${bare(Math.max(...values))})`;
}
/** A goal with whether this run met it. */
export const goal = (text: string, met: boolean) => `${text} (${met ? 'met' : 'missed'})`;

export function markdownTable(rows: readonly Row[]): string {
  const header = [
    'what (median of the runs, their range)',
    'localplane',
    'peer, same run',
    "peer's figure",
    'localplane ÷ peer',
    'goal',
  ];
  const lines = [
    header,
    header.map(() => '---'),
    ...rows.map((row) => [row.what, row.localplane, row.peer, row.peerFigure, row.ratio, row.goal]),
  ];
  return lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

function osName(): string {
  try {
    return /^PRETTY_NAME="?([^"\n]+)/m.exec(readFileSync('/etc/os-release', 'utf8'))![1]!;
  } catch {
    return `${process.platform} ${release()}`;
  }
}

function commit(): string {
  try {
    const hash = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() !== '';
    return dirty ? `${hash} with uncommitted changes` : hash;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/** The machine and the moment, as bullet lines for the docs. */
export function describeMachine(): string[] {
  const cores = cpus();
  return [
    `CPU: ${cores[0]?.model.trim() ?? 'unknown'}, ${cores.length} cores`,
    `RAM: ${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    `Node ${process.version} on ${osName()} (${process.platform} ${release()})`,
    `date: ${new Date().toISOString().replace(/\.\d+Z$/, 'Z')}`,
    `commit: ${commit()}`,
  ];
}

const FIGURES_HEADING = '## Figures';

/**
 * Replaces the figures section (from its heading to the end of the file) of the benchmarks doc, keeping the prose above
 * it.
 */
export function writeFigures(docPath: string, section: string): void {
  const text = readFileSync(docPath, 'utf8');
  const at = text.indexOf(`\n${FIGURES_HEADING}\n`);
  const prose = at === -1 ? `${text.trimEnd()}\n` : text.slice(0, at + 1);
  writeFileSync(docPath, `${prose}\n${FIGURES_HEADING}\n\n${section.trim()}\n`.replace(/\n\n\n+/g, '\n\n'));
}
