import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Crc64NvmeJs } from '@aws-sdk/checksums/crc';
import { describe, expect, it } from 'vitest';
import { assembleWat } from '../../scripts/assemble-wasm.ts';
import { Crc64Nvme } from '../../src/objstore/server/bodies/crc64-nvme.ts';
import { MODULE_BYTES } from '../../src/objstore/server/bodies/crc64-nvme.wasm.ts';

const WAT = fileURLToPath(new URL('../../src/objstore/server/bodies/crc64-nvme.wat', import.meta.url));

const hex = async (checksum: { digest(): Promise<Uint8Array> }) => Buffer.from(await checksum.digest()).toString('hex');

describe("the objstore's CRC64/NVME", () => {
  it('runs the bytes crc64-nvme.wat assembles to', async () => {
    const assembled = Buffer.from(await assembleWat(WAT)).toString('hex');
    expect(
      Buffer.from(MODULE_BYTES).toString('hex'),
      'crc64-nvme.wasm.ts is not what crc64-nvme.wat assembles to: run npm run assemble:wasm',
    ).toBe(assembled);
  });

  it('is the check value of the CRC64/NVME catalogue entry', async () => {
    const crc = new Crc64Nvme();
    crc.update(Buffer.from('123456789'));
    expect(await hex(crc)).toBe('ae8b14860a799888');
  });

  it.each([0, 1, 7, 8, 9, 4_093, 65_536, 131_071, 131_072, 131_073, 400_003])(
    "equals the AWS SDK's over %i bytes, given whole or in uneven pieces",
    async (size) => {
      const data = randomBytes(size);
      const sdk = new Crc64NvmeJs();
      sdk.update(data);
      const whole = new Crc64Nvme();
      whole.update(data);
      const pieces = new Crc64Nvme();
      for (let at = 0, step = 1; at < size; at += step, step = ((step * 7) % 1_000) + 1)
        pieces.update(data.subarray(at, at + step));
      const expected = await hex(sdk);
      expect(await hex(whole)).toBe(expected);
      expect(await hex(pieces)).toBe(expected);
    },
  );

  it('keeps each checksum its own when several are computed at once', async () => {
    const [a, b] = [randomBytes(200_000), randomBytes(200_000)];
    const [crcA, crcB] = [new Crc64Nvme(), new Crc64Nvme()];
    for (let at = 0; at < a.length; at += 10_000) {
      crcA.update(a.subarray(at, at + 10_000));
      crcB.update(b.subarray(at, at + 10_000));
    }
    const [sdkA, sdkB] = [new Crc64NvmeJs(), new Crc64NvmeJs()];
    sdkA.update(a);
    sdkB.update(b);
    expect([await hex(crcA), await hex(crcB)]).toEqual([await hex(sdkA), await hex(sdkB)]);
  });

  it("equals the AWS SDK's over every length from 0 to 1000, each from 8 starting offsets", async () => {
    const data = randomBytes(1_000 + 8);
    const wrong: string[] = [];
    for (let offset = 0; offset < 8; offset++) {
      for (let length = 0; length <= 1_000; length++) {
        const bytes = data.subarray(offset, offset + length);
        const [ours, sdk] = [new Crc64Nvme(), new Crc64NvmeJs()];
        ours.update(bytes);
        sdk.update(bytes);
        const [actual, expected] = [await hex(ours), await hex(sdk)];
        if (actual !== expected) wrong.push(`${length} bytes at ${offset}: ${actual}, the SDK's ${expected}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it.each([3, 5])("equals the AWS SDK's over %i MB starting at an odd address", async (megabytes) => {
    const data = randomBytes(megabytes * 1_000_000 + 1).subarray(1);
    const [ours, sdk] = [new Crc64Nvme(), new Crc64NvmeJs()];
    ours.update(data);
    sdk.update(data);
    expect(await hex(ours)).toBe(await hex(sdk));
  });
});
