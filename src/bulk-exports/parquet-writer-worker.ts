/** The export encoder's Parquet writer thread (see encoder-thread.ts): Arrow IPC streams from the reader to Parquet files. */
import type { WriteRequest } from './encoder-thread.ts';
import { parquetFromArrow } from './parquet.ts';
import { answerRequests } from './worker-replies.ts';

answerRequests(
  (request: WriteRequest) => parquetFromArrow(request.ipc, request.parquet),
  (parquet) => (parquet.byteOffset === 0 && parquet.byteLength === parquet.buffer.byteLength ? (parquet.buffer as ArrayBuffer) : undefined),
);
