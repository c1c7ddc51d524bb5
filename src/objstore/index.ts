export { startObjstore } from './objstore.ts';
export { OBJSTORE_PERMISSIONS } from './types.ts';
export type {
  Objstore,
  ObjstoreKey,
  ObjstoreKeyLookup,
  ObjstoreOptions,
  ObjstorePermission,
  ObjstoreRequestRecord,
} from './types.ts';
