import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

import type { Checksum, SourceData } from '@smithy/types';

function toBuffer(data: ArrayBuffer | ArrayBufferView): Buffer {
  return ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data);
}

/** SHA-256, or HMAC-SHA256 when given a secret, from node:crypto in the shape the signer takes. */
export class NodeSha256 implements Checksum {
  private hash: Hash | Hmac;

  constructor(private readonly secret?: SourceData) {
    this.hash = this.start();
  }

  update(data: Uint8Array): void {
    this.hash.update(data);
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }

  reset(): void {
    this.hash = this.start();
  }

  private start(): Hash | Hmac {
    if (this.secret === undefined) return createHash('sha256');
    return createHmac('sha256', typeof this.secret === 'string' ? this.secret : toBuffer(this.secret));
  }
}
