/** What storage-level tests hand an ObjstoreStorage as an upload's body. */
import type { IncomingContent, ObjstoreStorage } from '../../../src/objstore/storage/storage.ts';

/** `data` received by `storage` as an upload's body is, closed and ready to place. */
export async function receivedContent(storage: ObjstoreStorage, data: string): Promise<IncomingContent> {
  const content = await storage.receive();
  await content.write([Buffer.from(data)]);
  await content.close();
  return content;
}
