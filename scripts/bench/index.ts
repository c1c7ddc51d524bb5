/**
 * npm run bench [-- --only cold,api,export,objstore,harness,dashboard --base <checkout> --runs 5 --seconds 5
 * --connections 50
 *                   --pinned | --no-pinned --generator wrk|autocannon --settle-seconds 90
 *                   --export-runs 1000000 --compression snappy --openapi <file> --no-docs]
 *
 * Runs the row groups, each once the load average has settled, prints one table (each figure
 * the median of the runs, beside a peer measured in the same run or beside its goal) and, when
 * every group ran, writes it with a description of the machine to docs/benchmarks.md. See
 * docs/benchmarks.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measureApiThroughput } from './api-throughput.ts';
import { measureColdStart } from './cold-start.ts';
import { measureDashboard } from './dashboard.ts';
import { measureExport } from './export.ts';
import { measureUploadParts } from './upload-parts.ts';
import { HARNESS_SAMPLES, measureHarnessOps } from './harness-ops.ts';
import { chooseGenerator, choosePlacement } from './load.ts';
import { prismDocument } from './processes.ts';
import { formatLoadAverage, type GroupLoad, loadAveragesLine, notQuietWarning, waitForQuiet } from './quiet.ts';
import { describeMachine, markdownTable, type Row, writeFigures } from './report.ts';

const GROUPS = ['cold', 'api', 'export', 'objstore', 'harness', 'dashboard'] as const;
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
    'settle-seconds': { type: 'string', default: '90' },
    'export-runs': { type: 'string', default: '1000000' },
    compression: { type: 'string', default: 'snappy' },
    openapi: { type: 'string' },
    'no-docs': { type: 'boolean', default: false },
    base: { type: 'string' },
  },
});

function wholeNumber(flag: string, text: string, least: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < least)
    throw new Error(`--${flag} must be a whole number of at least ${least}, got "${text}"`);
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
  settleSeconds: wholeNumber('settle-seconds', values['settle-seconds']!, 0),
  exportRuns: wholeNumber('export-runs', values['export-runs']!, 1),
  compression: values.compression!,
  log: (line: string) => console.error(line),
};

const began = performance.now();
const machine = describeMachine();
const scratch = mkdtempSync(join(tmpdir(), 'localplane-bench-'));
const rows: Row[] = [];
const loads: GroupLoad[] = [];
async function runGroup(group: (typeof GROUPS)[number], measure: () => Promise<Row[]>): Promise<void> {
  if (!only.includes(group)) return;
  await waitForQuiet(settings.settleSeconds, settings.log);
  const before = loadavg();
  settings.log(`${group}: load average ${formatLoadAverage(before)} before`);
  rows.push(...(await measure()));
  const after = loadavg();
  settings.log(`${group}: load average ${formatLoadAverage(after)} after`);
  loads.push({ group, before: before[0]!, after: after[0]! });
}
try {
  const prism =
    only.includes('cold') || only.includes('api') ? await prismDocument(values.openapi, scratch) : undefined;
  await runGroup('cold', () => measureColdStart({ ...settings, prism: prism! }));
  await runGroup('api', () => measureApiThroughput({ ...settings, prism: prism! }));
  await runGroup('export', () => measureExport(settings));
  await runGroup('objstore', () => measureUploadParts({ ...settings, base: values.base }));
  await runGroup('harness', () => measureHarnessOps(settings));
  await runGroup('dashboard', () => measureDashboard({ ...settings, scratch }));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const minutes = (performance.now() - began) / 60_000;
const warning = notQuietWarning(loads);
const section = [
  ...(warning ? [warning, ''] : []),
  markdownTable(rows),
  '',
  `Settings: ${settings.runs} runs of each figure (reset, restore and start + stop: ${HARNESS_SAMPLES} samples), ` +
    `${settings.seconds} s of load per API sample at ${settings.connections} connections, ` +
    (`${settings.exportRuns.toLocaleString('en')} runs exported (${settings.compression}); the whole run ` +
      `took ${minutes.toFixed(1)} min.`),
  '',
  loadAveragesLine(loads),
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
