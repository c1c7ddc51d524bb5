import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { markdownTable, median, medianAndRange, milliseconds, perSecond, writeFigures } from '../scripts/bench/report.ts';

describe('npm run bench: the table and docs/benchmarks.md', () => {
  let scratch = '';
  beforeEach(() => {
    scratch = mkdtempSync(join(tmpdir(), 'localplane-bench-report-'));
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('takes the middle value of an odd count, the mean of the two middle ones of an even count, whatever their order', () => {
    expect(median([9, 1, 5])).toBe(5);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('gives a figure as its median and the range of the runs, the unit once', () => {
    expect(medianAndRange([1044.2, 1446, 1315.4], milliseconds)).toBe('1,315 ms (1,044–1,446)');
    expect(medianAndRange([2000, 1995], perSecond)).toBe('1,998/s (1,995–2,000)');
  });

  it('prints one table row per row, under one header', () => {
    const table = markdownTable([{ what: 'reset', localplane: '3.00 ms', peer: 'none', peerFigure: '5.00 ms', ratio: '0.60×', goal: '≤ 5 ms (met)' }]);
    expect(table.split('\n')).toEqual([
      "| what (median of the runs, their range) | localplane | peer, same run | peer's figure | localplane ÷ peer | goal |",
      '| --- | --- | --- | --- | --- | --- |',
      '| reset | 3.00 ms | none | 5.00 ms | 0.60× | ≤ 5 ms (met) |',
    ]);
  });

  it('replaces the figures section and keeps the prose above it', () => {
    const doc = join(scratch, 'benchmarks.md');
    writeFileSync(doc, '# Benchmarks\n\nHow to run them.\n\n## Figures\n\n| old | table |\n');
    writeFigures(doc, '| new | table |\n\nMachine: two cores');
    expect(readFileSync(doc, 'utf8')).toBe('# Benchmarks\n\nHow to run them.\n\n## Figures\n\n| new | table |\n\nMachine: two cores\n');
    writeFigures(doc, '| newer |');
    expect(readFileSync(doc, 'utf8')).toBe('# Benchmarks\n\nHow to run them.\n\n## Figures\n\n| newer |\n');
  });

  it('adds a figures section to a doc that has none', () => {
    const doc = join(scratch, 'benchmarks.md');
    writeFileSync(doc, '# Benchmarks\n\nHow to run them.\n');
    writeFigures(doc, '| new |');
    expect(readFileSync(doc, 'utf8')).toBe('# Benchmarks\n\nHow to run them.\n\n## Figures\n\n| new |\n');
  });
});
