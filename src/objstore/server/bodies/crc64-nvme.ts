/**
 * CRC64/NVME, the checksum S3 gives every object that arrives without one, computed in a few
 * lines of WebAssembly: the same slicing-by-8 table lookups as the AWS SDK's JavaScript
 * implementation, on 64-bit words instead of pairs of 32-bit halves: 1-1.5 GB/s on a 2-core
 * machine, three to four times the SDK's speed (`npx tsx scripts/bench/crc64.ts` measures both).
 * Every byte uploaded to the objstore passes through it, and in JavaScript it was the largest
 * cost of receiving an upload (more than MD5 and SHA-256 together).
 *
 * The WebAssembly's source is crc64-nvme.wat, beside this file; crc64-nvme.wasm.ts holds the
 * bytes it assembles to (`npm run assemble:wasm` writes it). This side fills the module's
 * lookup tables and moves each checksum's CRC and bytes in and out of its memory, at the
 * addresses the .wat describes.
 */
import { MODULE_BYTES } from './crc64-nvme.wasm.ts';

/** The CRC's polynomial, bit-reflected. */
const POLYNOMIAL = 0x9a6c9329ac4bc9b5n;
const ALL_ONES = 0xffffffffffffffffn;

/** Where the module keeps the running CRC, the 8 tables (256 words each) and the bytes to add, as the .wat says. */
const STATE_AT = 0;
const TABLES_AT = 1024;
const DATA_AT = 65536;
const DATA_BYTES = 2 * 65536;

/** Table k turns a byte k + 1 places from the end of an 8-byte word into its share of the CRC. */
function lookupTables(): BigUint64Array {
  const tables = new BigUint64Array(8 * 256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = BigInt(byte);
    for (let bit = 0; bit < 8; bit++) crc = crc & 1n ? (crc >> 1n) ^ POLYNOMIAL : crc >> 1n;
    tables[byte] = crc;
  }
  for (let k = 1; k < 8; k++) {
    for (let byte = 0; byte < 256; byte++) {
      const previous = tables[(k - 1) * 256 + byte]!;
      tables[k * 256 + byte] = (previous >> 8n) ^ tables[Number(previous & 0xffn)]!;
    }
  }
  return tables;
}

interface Engine {
  update(ptr: number, len: number): void;
  state: BigUint64Array;
  data: Uint8Array;
}

let engine: Engine | undefined;

function startEngine(): Engine {
  const { exports } = new WebAssembly.Instance(new WebAssembly.Module(MODULE_BYTES));
  const memory = exports.memory as WebAssembly.Memory;
  if (memory.buffer.byteLength < DATA_AT + DATA_BYTES) throw new Error('crc64-nvme.wat: its memory is too small');
  new BigUint64Array(memory.buffer, TABLES_AT, 8 * 256).set(lookupTables());
  return {
    update: exports.update as Engine['update'],
    state: new BigUint64Array(memory.buffer, STATE_AT, 1),
    data: new Uint8Array(memory.buffer, DATA_AT, DATA_BYTES),
  };
}

/**
 * A CRC64/NVME over data given in pieces, used as the SDK's checksums are; its digest is the 8 bytes big-endian, as S3
 * writes it.
 */
export class Crc64Nvme {
  private crc = ALL_ONES;

  update(data: Uint8Array): void {
    const { update, state, data: input } = (engine ??= startEngine());
    // One module serves every checksum: each brings its CRC in and takes it back out.
    state[0] = this.crc;
    for (let at = 0; at < data.byteLength; at += DATA_BYTES) {
      const piece = data.subarray(at, at + DATA_BYTES);
      input.set(piece);
      update(DATA_AT, piece.byteLength);
    }
    this.crc = state[0]!;
  }

  async digest(): Promise<Uint8Array> {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setBigUint64(0, this.crc ^ ALL_ONES);
    return bytes;
  }
}
