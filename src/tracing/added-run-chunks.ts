import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, writeSync } from 'node:fs';
import type { Db } from '../shared/db.ts';
import { openPrivateFile } from '../shared/private-files.ts';
import type { Micros } from '../shared/time.ts';
import { locationsOf, type ChunkSequence } from './run-chunks.ts';
import { RunChunkBuilder } from './run-rows-chunks.ts';
import type { RunRow } from './schema.ts';

/**
 * The chunks (run-chunks.ts) of the runs added at run time, so that an export reads them as it
 * reads seeded ones. Runs inserted in one transaction get their own sequences of chunks, made
 * from the runs as they are inserted and written in that transaction: the chunks' bytes are
 * appended to a file beside the instance database (`<database>.added-run-chunks`), and
 * `added_run_chunks` says where each one is. Runs added at different times may interleave in
 * time; a page merges the sequences.
 *
 * The table is derived (see TableSet): a reset empties it with the runs, a workspace reset
 * deletes the chunks of its sessions with their runs, and a restore empties it, as the
 * snapshot's offsets point into another file. Whatever put runs in the database without chunks
 * (a restore, a data dir kept from before them or cut short by a crash) gets them written at
 * the next start or restore (AddedRunChunkWriter.cover).
 */
export const ADDED_RUN_CHUNKS_DDL = `
CREATE TABLE IF NOT EXISTS added_run_chunks (
  session_id TEXT NOT NULL,
  batch INTEGER NOT NULL,
  last_start_time INTEGER NOT NULL,
  last_id TEXT NOT NULL,
  rows INTEGER NOT NULL,
  file_offset INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (session_id, batch, last_start_time, last_id)
) WITHOUT ROWID;`;

/** The file of the chunks of an instance database's added runs: beside it, named after it. */
const chunksFileOf = (db: Db): string => `${db.name}.added-run-chunks`;

/** The sequences of chunks of a session's added runs, as the database holds them (any connection). */
export class AddedRunChunks {
  private readonly file;
  private readonly batches;
  private readonly locations;

  constructor(db: Db) {
    this.file = chunksFileOf(db);
    this.batches = db
      .prepare<[string], number>('SELECT DISTINCT batch FROM main.added_run_chunks WHERE session_id = ? ORDER BY batch')
      .pluck();
    this.locations = db
      .prepare<[string, number, Micros, string, number]>(
        'SELECT rows, file_offset, bytes, last_start_time, last_id FROM main.added_run_chunks WHERE session_id = ? ' +
          'AND batch = ? AND (last_start_time, last_id) > (?, ?) ORDER BY last_start_time, last_id LIMIT ?',
      )
      .raw();
  }

  sequences(sessionId: string): ChunkSequence[] {
    return this.batches.all(sessionId).map((batch) => ({
      file: this.file,
      chunksAfter: (after, count) =>
        locationsOf(this.locations.all(sessionId, batch, after.startTime, after.id, count), 0),
    }));
  }
}

/** Runs of one transaction laid out together at most: a sequence's memory while it is made (about 1.4 KB a run). */
const SEQUENCE_RUNS = 8_192;
/**
 * Runs per chunk of added runs: a page reads a chunk of each sequence that it takes runs from, and the runs added in
 * several calls over the same days interleave, so a chunk of the template's size would be read mostly for nothing.
 */
const ADDED_CHUNK_ROWS = 64;

/**
 * Writes the chunks of added runs, on the instance's own connection: from the runs as they are inserted
 * (RunChunkBuilder), SEQUENCE_RUNS to a sequence.
 */
export class AddedRunChunkWriter {
  private readonly file;
  private descriptor: number | undefined;
  private size = 0;
  private readonly builder = new RunChunkBuilder();
  private readonly statements;

  constructor(private readonly db: Db) {
    this.file = chunksFileOf(db);
    this.statements = {
      runsAfter: db.prepare<[string, Micros, string, number], RunRow>(
        'SELECT * FROM main.runs WHERE session_id = ? AND (start_time, id) > (?, ?) ORDER BY start_time, id LIMIT ?',
      ),
      nextBatch: db
        .prepare<[string], number>('SELECT ifnull(max(batch), 0) + 1 FROM main.added_run_chunks WHERE session_id = ?')
        .pluck(),
      record: db.prepare(
        'INSERT INTO main.added_run_chunks (session_id, batch, last_start_time, last_id, rows, file_offset, bytes) ' +
          'VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      runsBySession: db
        .prepare<[], [string, number]>('SELECT session_id, count(*) FROM main.runs GROUP BY session_id')
        .raw(),
      chunkedBySession: db
        .prepare<[], [string, number]>('SELECT session_id, sum(rows) FROM main.added_run_chunks GROUP BY session_id')
        .raw(),
      end: db.prepare<[], number>('SELECT ifnull(max(file_offset + bytes), 0) FROM main.added_run_chunks').pluck(),
      forgetSession: db.prepare<[string]>('DELETE FROM main.added_run_chunks WHERE session_id = ?'),
      forgetAll: db.prepare('DELETE FROM main.added_run_chunks'),
    };
  }

  /** A run inserted in the current transaction: its chunks are written by `flush`, in the same transaction. */
  add(run: RunRow): void {
    this.builder.add(run);
    if (this.builder.size >= SEQUENCE_RUNS) this.flush();
  }

  /**
   * Writes the chunks of the runs added since the last flush, one sequence per session; in the transaction that
   * inserted them, so that the chunks and the runs are committed together.
   */
  flush(): void {
    if (this.builder.size === 0) return;
    this.open();
    const batches = new Map<string, number>();
    for (const chunk of this.builder.chunks(ADDED_CHUNK_ROWS)) {
      let batch = batches.get(chunk.sessionId);
      if (batch === undefined) batches.set(chunk.sessionId, (batch = this.statements.nextBatch.get(chunk.sessionId)!));
      const at = this.append(chunk.bytes);
      this.statements.record.run(
        chunk.sessionId,
        batch,
        chunk.last.startTime,
        chunk.last.id,
        chunk.rows,
        at,
        chunk.bytes.byteLength,
      );
    }
    this.syncIfDurable();
  }

  /**
   * Ends a batch of additions: forgets the runs added since the last flush (their transaction was rolled back, if
   * any) and gives back the memory they were laid out in.
   */
  done(): void {
    this.builder.release();
  }

  /**
   * Gives every run of main its chunks, rewriting those of a session whose chunks do not count its runs (the runs
   * came without them), and all of them when the file ends before the chunks do.
   */
  cover(): void {
    const runs = new Map(this.statements.runsBySession.all());
    const chunked = new Map(this.statements.chunkedBySession.all());
    // No file is made for an instance that has no added runs.
    if (runs.size === 0 && chunked.size === 0) return;
    const fileEnd = this.open();
    this.db.transaction(() => {
      if (this.statements.end.get()! > fileEnd) {
        this.statements.forgetAll.run();
        chunked.clear();
      }
      for (const sessionId of new Set([...runs.keys(), ...chunked.keys()])) {
        if (runs.get(sessionId) === chunked.get(sessionId)) continue;
        this.statements.forgetSession.run(sessionId);
        let after = { startTime: Number.MIN_SAFE_INTEGER, id: '' };
        for (;;) {
          const page = this.statements.runsAfter.all(sessionId, after.startTime, after.id, SEQUENCE_RUNS);
          for (const run of page) this.builder.add(run);
          this.flush();
          if (page.length < SEQUENCE_RUNS) break;
          after = { startTime: page.at(-1)!.start_time, id: page.at(-1)!.id };
        }
      }
    })();
    this.builder.release();
  }

  /** Empties the file, once a reset has emptied the table. */
  clear(): void {
    if (this.descriptor === undefined) return;
    ftruncateSync(this.descriptor, 0);
    this.size = 0;
  }

  close(): void {
    if (this.descriptor !== undefined) closeSync(this.descriptor);
    this.descriptor = undefined;
  }

  /** Opens the file (made when missing; a link or anything but a file in its place refused) at its end; its size. */
  private open(): number {
    if (this.descriptor === undefined) {
      this.descriptor = openPrivateFile(this.file, { create: true })!;
      this.size = fstatSync(this.descriptor).size;
    }
    return this.size;
  }

  private append(bytes: Uint8Array): number {
    const at = this.size;
    writeSync(this.descriptor!, bytes, 0, bytes.byteLength, at);
    this.size += bytes.byteLength;
    return at;
  }

  /** A kept data dir's database is synced at each commit: the chunks its rows point to are on disk first. */
  private syncIfDurable(): void {
    if (this.descriptor !== undefined && this.db.pragma('synchronous', { simple: true }) !== 0)
      fdatasyncSync(this.descriptor);
  }
}
