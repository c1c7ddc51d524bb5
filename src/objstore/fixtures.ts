import type { Db } from '../shared/db.ts';
import type { ObjstoreFile } from './fixture-file.ts';
import { ObjstoreKeyStore } from './key-store.ts';

/** Seeds a template with objstore.json's buckets and key pairs. */
export function seedObjstore(db: Db, file: ObjstoreFile): void {
  for (const bucket of file.buckets) ObjstoreKeyStore.insertBucket(db, bucket);
  for (const key of file.keys) {
    ObjstoreKeyStore.insertKey(db, {
      accessKeyId: key.access_key_id,
      secretAccessKey: key.secret_access_key,
      permissions: key.permissions,
    });
  }
}
