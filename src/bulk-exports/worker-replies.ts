import { parentPort } from 'node:worker_threads';
import type { WorkerReply } from './encoder-thread.ts';

/**
 * Answers each request of the encoder thread with `handle`'s result, or its failure as the
 * request's error; the result's buffers (`transfer`) are moved to the caller, not copied.
 */
export function answerRequests<Request, Result>(handle: (request: Request) => Result, transfer: (result: Result) => ArrayBuffer | undefined): void {
  parentPort!.on('message', ({ id, request }: { id: number; request: Request }) => {
    let reply: WorkerReply<Result>;
    try {
      reply = { id, result: handle(request) };
    } catch (error) {
      reply = { id, error: error instanceof Error ? error.message : String(error) };
    }
    const buffer = 'result' in reply ? transfer(reply.result) : undefined;
    parentPort!.postMessage(reply, buffer ? [buffer] : []);
  });
}
