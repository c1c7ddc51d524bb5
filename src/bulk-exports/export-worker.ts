/**
 * The export encoder's worker thread (see encoder-thread.ts): reads an export file's runs
 * over its own read-only connection and encodes them as Parquet, whose bytes it hands back
 * without a copy.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openInstanceReader } from '../shared/db.ts';
import { TracingStore } from '../tracing/store.ts';
import type { EncodedFile, EncodeRequest, EncoderDatabase, EncoderReply } from './encoder-thread.ts';
import { encodeRunsParquet, exportedColumns } from './parquet.ts';

const database = workerData as EncoderDatabase;
const tracing = new TracingStore(openInstanceReader(database.path, database.templatePath));

function encodeFile(request: EncodeRequest): EncodedFile | null {
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
      parquet: encodeRunsParquet(rows, request.parquet),
    };
  }
  return null;
}

parentPort!.on('message', ({ id, request }: { id: number; request: EncodeRequest }) => {
  let reply: EncoderReply;
  try {
    reply = { id, file: encodeFile(request) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  const bytes = 'file' in reply ? reply.file?.parquet : undefined;
  parentPort!.postMessage(reply, bytes && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? [bytes.buffer as ArrayBuffer] : []);
});
