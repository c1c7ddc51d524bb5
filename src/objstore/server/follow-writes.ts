import type { ServerResponse } from 'node:http';

import type { FileView } from '../file-view/file-view.ts';
import type { Exchange } from './exchange.ts';

/** Methods that never change objects. */
const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Holds back the end of a response that may have changed objects until the view has followed,
 * so a client that has its answer finds the file in place. Any authorised request other than
 * a read counts, whatever its operation name and its outcome: a request that failed may have
 * changed objects before it did, and re-checking a key that did not change costs two stats. Bucket-level writes
 * (DeleteObjects, PostObject) name their keys in the body, so the whole bucket is brought in step.
 */
export function followWrites(exchange: Exchange, view: FileView): void {
  const { res } = exchange;
  const end = res.end;
  res.end = function endAfterSync(this: ServerResponse, ...args: unknown[]) {
    const { bucket, key } = exchange;
    if (!exchange.authenticated || READ_METHODS.has(exchange.method) || bucket === null) {
      return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
    }
    const synced = key === null ? view.syncBucket(bucket) : view.syncKey(bucket, key);
    void synced.then(() => (end as (...a: unknown[]) => ServerResponse).apply(this, args));
    return this;
  } as ServerResponse['end'];
}
