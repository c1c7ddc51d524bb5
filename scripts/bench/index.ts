/**
 * npm run bench [-- --only cold,api,export,harness,dashboard --runs 5 --seconds 5 --connections 50
 *                   --pinned | --no-pinned --generator wrk|autocannon
 *                   --export-runs 1000000 --compression snappy --openapi <file> --no-docs]
 *
 * Runs the row groups, prints one table (each figure the median of the runs, beside a peer
 * measured in the same run or beside its goal) and, when every group ran, writes it with a
 * description of the machine to docs/benchmarks.md. See docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measureApiThroughput } from './api-throughput.ts';
import { measureColdStart } from './cold-start.ts';
import { measureDashboard } from './dashboard.ts';
import { measureExport } from './export.ts';
import { HARNESS_SAMPLES, measureHarnessOps } from './harness-ops.ts';
import { chooseGenerator, choosePlacement } from './load.ts';
import { prismDocument } from './processes.ts';
import { describeMachine, markdownTable, type Row, writeFigures } from './report.ts';

const GROUPS = ['cold', 'api', 'export', 'harness', 'dashboard'] as const;
const DOC = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: GROUPS.join(',') },
    runs: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    pinned: { type: 'boolean' },
    'no-pinned': { type: 'boolean' },
    generator: { type: 'string' },
    'export-runs': { type: 'string', default: '1000000' },
    compression: { type: 'string', default: 'snappy' },
    openapi: { type: 'string' },
    'no-docs': { type: 'boolean', default: false },
  },
});

function wholeNumber(flag: string, text: string, least: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < least) throw new Error(`--${flag} must be a whole number of at least ${least}, got "${text}"`);
  return value;
}

const only = values.only!.split(',').map((group) => group.trim());
const unknown = only.filter((group) => !(GROUPS as readonly string[]).includes(group));
if (unknown.length > 0) throw new Error(`--only takes ${GROUPS.join(', ')}; unknown: ${unknown.join(', ')}`);
if (values.pinned && values['no-pinned']) throw new Error('--pinned and --no-pinned: one or the other');
const settings = {
  runs: wholeNumber('runs', values.runs!, 1),
  seconds: wholeNumber('seconds', values.seconds!, 1),
  connections: wholeNumber('connections', values.connections!, 1),
  generator: chooseGenerator(values.generator),
  placement: choosePlacement(values.pinned ? true : values['no-pinned'] ? false : undefined),
  exportRuns: wholeNumber('export-runs', values['export-runs']!, 1),
  compression: values.compression!,
  log: (line: string) => console.error(line),
};

const began = performance.now();
const machine = describeMachine();
const scratch = mkdtempSync(join(tmpdir(), 'localplane-bench-'));
const rows: Row[] = [];
try {
  const prism = only.includes('cold') || only.includes('api') ? await prismDocument(values.openapi, scratch) : undefined;
  if (only.includes('cold')) rows.push(...(await measureColdStart({ ...settings, prism: prism! })));
  if (only.includes('api')) rows.push(...(await measureApiThroughput({ ...settings, prism: prism! })));
  if (only.includes('export')) rows.push(...(await measureExport(settings)));
  if (only.includes('harness')) rows.push(...(await measureHarnessOps(settings)));
  if (only.includes('dashboard')) rows.push(...(await measureDashboard(settings)));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const minutes = (performance.now() - began) / 60_000;
const section = [
  markdownTable(rows),
  '',
  `Settings: ${settings.runs} runs of each figure (reset, restore and start + stop: ${HARNESS_SAMPLES} samples), ` +
    `${settings.seconds} s of load per API sample at ${settings.connections} connections, ` +
    `${settings.exportRuns.toLocaleString('en')} runs exported (${settings.compression}); the whole run took ${minutes.toFixed(1)} min.`,
  '',
  'Machine:',
  '',
  ...machine.map((line) => `- ${line}`),
].join('\n');
console.log(section);
if (values['no-docs'] || only.length < GROUPS.length) {
  console.error(`docs/benchmarks.md left as it was (${values['no-docs'] ? '--no-docs' : 'not every group ran'})`);
} else {
  writeFigures(DOC, section);
  console.error('written to docs/benchmarks.md');
}
