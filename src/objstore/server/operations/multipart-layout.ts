/**
 * What a completed multipart object remembers of its parts (their sizes and checksums, and the
 * upload's checksum), read by the part reads (multipart-objects.ts), GetObjectAttributes and the
 * admin API's object view.
 *
 * The layout is kept in the object's stored metadata under one key that is never answered as a
 * header; every other write of the object rewrites the metadata without it, so an object that has
 * it is the multipart object it describes (a copy keeps it along with the multipart ETag).
 */
import type { UploadChecksum } from './multipart-checksums.ts';

const LAYOUT_KEY = 'localplane-multipart';

export interface ObjectPart {
  /** As uploaded (S3 lists parts by the numbers they were uploaded with). */
  number: number;
  size: number;
  /** Base64, of the upload's checksum algorithm; null when the upload had none. */
  checksum: string | null;
}

export interface MultipartLayout {
  parts: ObjectPart[];
  checksum: UploadChecksum | null;
}

/** The metadata entry that keeps a layout. */
export function layoutMetadata(layout: MultipartLayout): Record<string, string> {
  return { [LAYOUT_KEY]: JSON.stringify(layout) };
}

/** The layout in an object's stored metadata; null for an object put in one piece. */
export function layoutOf(metadata: Readonly<Record<string, unknown>>): MultipartLayout | null {
  const stored = metadata[LAYOUT_KEY];
  return typeof stored === 'string' ? (JSON.parse(stored) as MultipartLayout) : null;
}
