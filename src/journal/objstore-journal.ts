import { z } from 'zod';
import type { RequestJournal } from './journal.ts';

/**
 * GET /_localplane/objstore/journal: the objstore's requests in their older shape (camel case, S3 details only, no
 * bodies).
 */
export const objstoreJournalSchema = z.array(
  z.object({
    /** When the request arrived, on the wall clock. */
    time: z.iso.datetime({ offset: true }),
    method: z.string(),
    operation: z.string(),
    bucket: z.string().nullable(),
    key: z.string().nullable(),
    accessKeyId: z.string().nullable(),
    status: z.int(),
    errorCode: z.string().nullable(),
  }),
);
export type ObjstoreJournalRecord = z.infer<typeof objstoreJournalSchema>[number];

/** The journal's objstore requests (`source=objstore`), oldest first, in that shape. */
export function objstoreJournal(journal: RequestJournal): ObjstoreJournalRecord[] {
  return journal.list({ source: 'objstore' }).map(({ wall_time, method, status, objstore }) => {
    // Every objstore request's entry has its S3 details.
    const { operation, bucket, key, access_key_id, error_code } = objstore!;
    return {
      time: wall_time,
      method,
      operation,
      bucket,
      key,
      accessKeyId: access_key_id,
      status,
      errorCode: error_code,
    };
  });
}
