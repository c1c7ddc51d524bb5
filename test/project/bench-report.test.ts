import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseAutocannonJson, parseCpuList, parseWrkOutput } from '../../scripts/bench/load.ts';
import { loadAveragesLine, notQuietWarning } from '../../scripts/bench/quiet.ts';
import {
  markdownTable,
  median,
  medianAndRange,
  milliseconds,
  perSecond,
  writeFigures,
} from '../../scripts/bench/report.ts';

/** wrk 4.1.0 (Debian) with --latency, 1 thread and 50 connections, as captured. */
const WRK_OUTPUT = `Running 1s test @ http://127.0.0.1:48124/v2/deployments?limit=20
  1 threads and 50 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.68ms    3.15ms  42.00ms   94.94%
    Req/Sec    42.11k    14.54k   50.56k    80.00%
  Latency Distribution
     50%    1.05ms
     75%    1.24ms
     90%    2.43ms
     99%   17.86ms
  41801 requests in 1.00s, 44.85MB read
Requests/sec:  41668.83
Transfer/sec:     44.71MB
`;

describe('npm run bench: the table and docs/benchmarks.md', () => {
  let scratch = '';
  beforeEach(() => {
    scratch = mkdtempSync(join(tmpdir(), 'localplane-bench-report-'));
  });
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it(
    'takes the middle value of an odd count, the mean of the two middle ones of an even count, whatever their ' +
      'order',
    () => {
      expect(median([9, 1, 5])).toBe(5);
      expect(median([4, 1, 3, 2])).toBe(2.5);
      expect(median([])).toBeNaN();
    },
  );

  it('gives a figure as its median and the range of the runs, the unit once', () => {
    expect(medianAndRange([1044.2, 1446, 1315.4], milliseconds)).toBe('1,315 ms (1,044–1,446)');
    expect(medianAndRange([2000, 1995], perSecond)).toBe('1,998/s (1,995–2,000)');
  });

  it('prints one table row per row, under one header', () => {
    const table = markdownTable([
      {
        what: 'reset',
        localplane: '3.00 ms',
        peer: 'none',
        peerFigure: '5.00 ms',
        ratio: '0.60×',
        goal: '≤ 5 ms (met)',
      },
    ]);
    expect(table.split('\n')).toEqual([
      "| what (median of the runs, their range) | localplane | peer, same run | peer's figure | localplane ÷ peer | " +
        'goal |',
      '| --- | --- | --- | --- | --- | --- |',
      '| reset | 3.00 ms | none | 5.00 ms | 0.60× | ≤ 5 ms (met) |',
    ]);
  });

  it('replaces the figures section and keeps the prose above it', () => {
    const doc = join(scratch, 'benchmarks.md');
    writeFileSync(doc, '# Benchmarks\n\nHow to run them.\n\n## Figures\n\n| old | table |\n');
    writeFigures(doc, '| new | table |\n\nMachine: two cores');
    expect(readFileSync(doc, 'utf8')).toBe(
      '# Benchmarks\n\nHow to run them.\n\n## Figures\n\n| new | table |\n\nMachine: two cores\n',
    );
    writeFigures(doc, '| newer |');
    expect(readFileSync(doc, 'utf8')).toBe('# Benchmarks\n\nHow to run them.\n\n## Figures\n\n| newer |\n');
  });

  it('adds a figures section to a doc that has none', () => {
    const doc = join(scratch, 'benchmarks.md');
    writeFileSync(doc, '# Benchmarks\n\nHow to run them.\n');
    writeFigures(doc, '| new |');
    expect(readFileSync(doc, 'utf8')).toBe('# Benchmarks\n\nHow to run them.\n\n## Figures\n\n| new |\n');
  });

  it("reads requests/s and p50/p99 from wrk's --latency output, in milliseconds whatever wrk's unit", () => {
    expect(parseWrkOutput(WRK_OUTPUT)).toEqual({ requestsPerSecond: 41668.83, p50: 1.05, p99: 17.86 });
    const otherUnits = WRK_OUTPUT.replace('1.05ms', '812.00us').replace('17.86ms', '1.20s');
    expect(parseWrkOutput(otherUnits)).toEqual({ requestsPerSecond: 41668.83, p50: 0.812, p99: 1200 });
  });

  it(
    'fails a wrk sample with socket errors or answers above 399, quoting wrk, and one without the latency ' +
      'distribution',
    () => {
      const refused = WRK_OUTPUT.replace('44.85MB read\n', '44.85MB read\n  Non-2xx or 3xx responses: 41801\n');
      expect(() => parseWrkOutput(refused)).toThrow('wrk: Non-2xx or 3xx responses: 41801 (of 41801 requests)');
      const timedOut = WRK_OUTPUT.replace(
        '44.85MB read\n',
        '44.85MB read\n  Socket errors: connect 0, read 0, write 0, timeout 12\n',
      );
      expect(() => parseWrkOutput(timedOut)).toThrow(
        'wrk: Socket errors: connect 0, read 0, write 0, timeout 12 (of 41801 requests)',
      );
      const withoutLatency = WRK_OUTPUT.replace(/ {2}Latency Distribution\n(.+\n){4}/, '');
      expect(() => parseWrkOutput(withoutLatency)).toThrow('no Requests/sec or no 50% and 99% latencies');
    },
  );

  it("reads autocannon's --json line and fails one with an answer not 2xx", () => {
    const result = {
      '2xx': 1000,
      non2xx: 0,
      errors: 0,
      duration: 2,
      requests: { total: 1000 },
      latency: { p50: 4, p99: 17 },
    };
    expect(parseAutocannonJson(`${JSON.stringify(result)}\n`)).toEqual({ requestsPerSecond: 500, p50: 4, p99: 17 });
    expect(() => parseAutocannonJson(JSON.stringify({ ...result, non2xx: 3 }))).toThrow(
      '3 answers not 2xx and 0 connection errors of 1000 requests',
    );
  });

  it('reads a Linux CPU list', () => {
    expect(parseCpuList('0-1\n')).toEqual([0, 1]);
    expect(parseCpuList('2,4-6')).toEqual([2, 4, 5, 6]);
    expect(() => parseCpuList('')).toThrow('not a CPU list');
  });

  it('warns above the table when the load average was above 1 at the start of any group, naming those groups', () => {
    expect(
      notQuietWarning([
        { group: 'cold', before: 0.4, after: 1.8 },
        { group: 'api', before: 1, after: 2.1 },
      ]),
    ).toBeUndefined();
    expect(
      notQuietWarning([
        { group: 'cold', before: 0.4, after: 1.8 },
        { group: 'api', before: 1.01, after: 2.1 },
        { group: 'export', before: 4.2, after: 3 },
      ]),
    ).toBe(
      '**not quiet: figures not comparable**: the load average (1 min) was above 1 at the start of api (1.01), ' +
        'export (4.20).',
    );
    expect(loadAveragesLine([{ group: 'cold', before: 0.4, after: 1.8 }])).toBe(
      'Load average (1 min) at the start and the end of each group: cold 0.40 → 1.80.',
    );
  });
});
