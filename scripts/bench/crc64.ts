/**
 * npx tsx scripts/bench/crc64.ts [--runs 7] [--also <file.ts>]...
 *
 * The objstore's CRC64/NVME (src/objstore/server/bodies/crc64-nvme.ts) against the AWS SDK's JavaScript one
 * (Crc64NvmeJs, what the SDK computes it with without the CRT), in MB/s over a 1 MB buffer (64 checksums a run)
 * and a 64 MB one: the median of the runs, the implementations taking turns in each run so that a busy machine
 * slows them alike.
 * `--also` adds another module exporting a `Crc64Nvme` class, such as an earlier version of crc64-nvme.ts
 * (`git show <commit>:src/objstore/server/bodies/crc64-nvme.ts > /tmp/crc64-old.ts`). Not part of `npm run bench`.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Crc64NvmeJs } from '@aws-sdk/checksums/crc';
import { Crc64Nvme } from '../../src/objstore/server/bodies/crc64-nvme.ts';

interface Checksum {
  update(data: Uint8Array): void;
  digest(): Promise<Uint8Array>;
}

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '7' }, also: { type: 'string', multiple: true, default: [] } },
});
const runs = Number(values.runs);
const implementations: [string, () => Checksum][] = [
  ['crc64-nvme.ts', () => new Crc64Nvme()],
  ['SDK Crc64NvmeJs', () => new Crc64NvmeJs()],
];
for (const file of values.also) {
  const loaded = (await import(pathToFileURL(resolve(file)).href)) as { Crc64Nvme: new () => Checksum };
  implementations.push([file, () => new loaded.Crc64Nvme()]);
}

const median = (rates: number[]) => [...rates].sort((a, b) => a - b)[Math.floor(rates.length / 2)]!;

for (const megabytes of [1, 64]) {
  const data = randomBytes(megabytes * 1_000_000);
  const checksumsPerRun = 64 / megabytes;
  const rates = new Map<string, number[]>(implementations.map(([name]) => [name, []]));
  const digests = new Set<string>();
  for (let run = -1; run < runs; run++) {
    for (const [name, start] of implementations) {
      const checksums = Array.from({ length: checksumsPerRun }, start);
      const began = process.hrtime.bigint();
      for (const checksum of checksums) checksum.update(data);
      const seconds = Number(process.hrtime.bigint() - began) / 1e9;
      for (const checksum of checksums) digests.add(Buffer.from(await checksum.digest()).toString('hex'));
      if (run >= 0) rates.get(name)!.push((checksumsPerRun * megabytes) / seconds); // run -1 warms up
    }
  }
  if (digests.size !== 1) throw new Error(`the implementations disagree over ${megabytes} MB: ${[...digests]}`);
  for (const [name, measured] of rates) {
    const each = measured.map((rate) => rate.toFixed(0)).join(' ');
    console.log(`${megabytes} MB  ${name}: median ${median(measured).toFixed(0)} MB/s (runs: ${each})`);
  }
}
