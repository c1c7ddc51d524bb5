/**
 * 3,000 UploadParts of 64 KiB into one upload of a spawned localplane, with each objstore storage
 * and, given a base checkout (`--base`), that checkout's own storage beside them: parts/s. Small
 * parts make the figure what a storage spends per part rather than per byte.
 */
import { join } from 'node:path';
import { Agent } from 'node:http';
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { EXPORT_BUCKET, FULL_ACCESS_KEY } from './client.ts';
import type { Placement } from './load.ts';
import { spawnLocalplane } from './processes.ts';
import { median, medianAndRange, perSecond, type Row, times } from './report.ts';

const PARTS = 3000;
const PART_BYTES = 64 * 1024;
const WARM_UP_PARTS = 300;
/** Requests in flight at once, as the SDK's managed uploader sends parts. */
const CONCURRENCY = 8;

interface Settings {
  runs: number;
  placement: Placement | undefined;
  /** A checkout of the base commit, built, to measure beside this one. */
  base: string | undefined;
  log: (line: string) => void;
}

interface Variant {
  label: string;
  flags: string[];
  bin?: string;
}

/** Sends `count` parts of one new upload, CONCURRENCY at a time; the seconds they took. */
async function uploadParts(s3: S3Client, count: number): Promise<number> {
  const body = Buffer.alloc(PART_BYTES, 7);
  const { UploadId } = await s3.send(
    new CreateMultipartUploadCommand({ Bucket: EXPORT_BUCKET, Key: 'bench/parts.bin' }),
  );
  const began = performance.now();
  let next = 1;
  const worker = async () => {
    for (let partNumber = next++; partNumber <= count; partNumber = next++) {
      await s3.send(
        new UploadPartCommand({
          Bucket: EXPORT_BUCKET,
          Key: 'bench/parts.bin',
          UploadId,
          PartNumber: partNumber,
          Body: body,
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (performance.now() - began) / 1000;
  await s3.send(new AbortMultipartUploadCommand({ Bucket: EXPORT_BUCKET, Key: 'bench/parts.bin', UploadId }));
  return seconds;
}

/** Parts/s of one fresh server, after a warm-up upload. */
async function partsPerSecond(variant: Variant, settings: Settings): Promise<number> {
  const server = await spawnLocalplane({ flags: variant.flags, bin: variant.bin, cpu: settings.placement?.serverCpu });
  const s3 = new S3Client({
    endpoint: server.objstoreUrl,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: FULL_ACCESS_KEY,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: CONCURRENCY }) }),
  });
  try {
    await uploadParts(s3, WARM_UP_PARTS);
    return PARTS / (await uploadParts(s3, PARTS));
  } finally {
    s3.destroy();
    await server.stop();
  }
}

export async function measureUploadParts(settings: Settings): Promise<Row[]> {
  const variants: Variant[] = [
    ...(settings.base
      ? [{ label: 'the base checkout (files storage)', flags: [], bin: join(settings.base, 'bin', 'localplane.js') }]
      : []),
    { label: 'files storage', flags: ['--objstore-storage', 'files'] },
    { label: 'memory storage', flags: ['--objstore-storage', 'memory'] },
  ];
  const rates = new Map<Variant, number[]>(variants.map((variant) => [variant, []]));
  // Variant by variant within each run, so that every variant sees the machine in the same minutes.
  for (let run = 1; run <= settings.runs; run++) {
    for (const variant of variants) {
      const rate = await partsPerSecond(variant, settings);
      rates.get(variant)!.push(rate);
      settings.log(`objstore ${run}/${settings.runs} (${variant.label}): ${perSecond(rate)} parts`);
    }
  }
  const files = variants.find((variant) => variant.label === 'files storage')!;
  const what =
    `${PARTS.toLocaleString('en')} UploadParts of ${PART_BYTES / 1024} KiB, ${CONCURRENCY} at a time, ` +
    `into one upload: parts/s`;
  return variants.map((variant) => ({
    what: `${what} (${variant.label})`,
    localplane: medianAndRange(rates.get(variant)!, perSecond),
    peer: variant === files ? 'none: the reference of the rows beside it' : 'the files storage in the same runs',
    peerFigure: variant === files ? '' : medianAndRange(rates.get(files)!, perSecond),
    ratio: variant === files ? '' : times(median(rates.get(variant)!) / median(rates.get(files)!)),
    goal: '',
  }));
}
