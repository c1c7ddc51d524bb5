/**
 * The export encoder's worker thread (see encoder-thread.ts): reads an export file's runs
 * over its own read-only connection to the instance's database and encodes them as Parquet,
 * whose bytes it hands back without a copy. It serves one instance at a time: an instance
 * that stops closes its connection, and the next one's first request opens another.
 */
import { parentPort } from 'node:worker_threads';
import { openInstanceReader, type Db } from '../shared/db.ts';
import { TracingStore } from '../tracing/store.ts';
import type { EncodedFile, EncodeRequest, EncoderDatabase, EncoderMessage, EncoderReply } from './encoder-thread.ts';
import { encodeColumnsParquet, exportedColumns } from './parquet.ts';

const READ_CACHE_KIB = 512;

let connection: { path: string; db: Db; tracing: TracingStore } | null = null;

function tracingOf(database: EncoderDatabase): TracingStore {
  if (connection?.path !== database.path) {
    closeConnection();
    const db = openInstanceReader(database.path, database.templatePath);
    // An export reads each page of the runs once: a page cache (16 MB per database in this
    // SQLite build) would only hold memory.
    for (const schema of ['main', 'seed']) db.pragma(`${schema}.cache_size = -${READ_CACHE_KIB}`);
    connection = { path: database.path, db, tracing: new TracingStore(db) };
  }
  return connection.tracing;
}

function closeConnection(): void {
  connection?.db.close();
  connection = null;
}

function encodeFile(tracing: TracingStore, request: EncodeRequest): EncodedFile | null {
  const columns = exportedColumns(request.parquet.columns);
  for (const { sessionId, after } of request.reads) {
    const { from, to, limit, filter } = request;
    const page = tracing.runColumnsPage({ sessionId, from, to, after, limit, filter, columns });
    if (page.rows === 0) continue;
    return {
      sessionId,
      rows: page.rows,
      last: page.last!,
      parquet: encodeColumnsParquet(page.rows, page.columns, request.parquet),
    };
  }
  return null;
}

parentPort!.on('message', (message: EncoderMessage) => {
  const { id } = message;
  let reply: EncoderReply;
  try {
    if ('close' in message) closeConnection();
    reply = { id, file: 'close' in message ? null : encodeFile(tracingOf(message.database), message.request) };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  const bytes = 'file' in reply ? reply.file?.parquet : undefined;
  parentPort!.postMessage(
    reply,
    bytes && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
      ? [bytes.buffer as ArrayBuffer]
      : [],
  );
});
