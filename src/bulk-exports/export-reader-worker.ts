/**
 * The export encoder's reader thread (see encoder-thread.ts): reads an export file's runs
 * over its own read-only connection to the instance database, as value arrays, and encodes
 * them as an Arrow IPC stream for the Parquet writer thread.
 */
import { workerData } from 'node:worker_threads';
import { openInstanceReader } from '../shared/db.ts';
import { TracingStore } from '../tracing/store.ts';
import type { ArrowFile, EncodeRequest, EncoderDatabase } from './encoder-thread.ts';
import { encodeRunsArrow, exportedColumns } from './parquet.ts';
import { answerRequests } from './worker-replies.ts';

const database = workerData as EncoderDatabase;
const tracing = new TracingStore(openInstanceReader(database.path, database.templatePath));

function readFile(request: EncodeRequest): ArrowFile | null {
  const columns = exportedColumns(request.parquet.columns);
  const cursorAt = columns.length;
  for (const { sessionId, after } of request.reads) {
    const { from, to, limit, filter } = request;
    const rows = tracing.runValuesPage({ sessionId, from, to, after, limit, filter, columns });
    if (rows.length === 0) continue;
    const last = rows.at(-1)!;
    return {
      sessionId,
      rows: rows.length,
      last: { startTime: last[cursorAt] as number, id: last[cursorAt + 1] as string },
      ipc: encodeRunsArrow(rows, request.parquet),
    };
  }
  return null;
}

answerRequests(readFile, (file) => file?.ipc.buffer as ArrayBuffer | undefined);
