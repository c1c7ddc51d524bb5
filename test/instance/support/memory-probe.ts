/**
 * A localplane instance in a process of its own, whose memory a test reads: run with
 * `node --expose-gc --import tsx`, it sends its URLs over IPC once it listens, then answers
 * `measure` with its heap and external memory after collecting garbage (what it still holds)
 * and its resident set and peak resident set since the last `reset-peak` (from /proc). An
 * `InProcessRequests` message sends requests to a second, in-process instance (no socket) of
 * the same process, and answers their statuses.
 */
import { readFileSync, writeFileSync } from 'node:fs';

import { createLocalplane, start, type InProcessLocalplane } from '../../../src/index.ts';

export interface ProbeMemory {
  /** Heap and external memory (Buffers) in use after a full garbage collection. */
  retained: number;
  rss: number;
  peakRss: number;
}

/** `count` times the same request, one after another, to the in-process instance. */
export interface InProcessRequests {
  path: string;
  init: { method: string; headers: Record<string, string>; body: string };
  count: number;
}

export type ProbeMessage = 'measure' | 'reset-peak' | 'stop' | InProcessRequests;

const statusBytes = (field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;

function measure(): ProbeMemory {
  // Twice: the first collection may leave what finalizers of the first freed.
  globalThis.gc!();
  globalThis.gc!();
  const { heapUsed, external } = process.memoryUsage();
  return { retained: heapUsed + external, rss: statusBytes('VmRSS'), peakRss: statusBytes('VmHWM') };
}

let inProcess: InProcessLocalplane | undefined;

async function requestInProcess({ path, init, count }: InProcessRequests): Promise<number[]> {
  inProcess ??= await createLocalplane();
  const statuses: number[] = [];
  for (let sent = 0; sent < count; sent++) {
    const response = await inProcess.request(path, init);
    await response.text();
    statuses.push(response.status);
  }
  return statuses;
}

const lp = await start({ port: 0, objstorePort: 0 });
process.on('message', (message: ProbeMessage) => {
  if (typeof message === 'object') void requestInProcess(message).then((statuses) => process.send!(statuses));
  if (message === 'measure') process.send!(measure());
  if (message === 'reset-peak') {
    // Linux: "5" resets the peak resident set (VmHWM) to the current one.
    writeFileSync('/proc/self/clear_refs', '5');
    process.send!('peak-reset');
  }
  if (message === 'stop') void Promise.all([lp.stop(), inProcess?.stop()]).then(() => process.exit(0));
});
process.send!({ apiUrl: lp.apiUrl, objstoreUrl: lp.objstoreUrl });
