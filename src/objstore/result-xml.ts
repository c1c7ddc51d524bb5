/** Writing the XML documents of the results the gateway answers itself. */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

import { escapeXml } from './errors.ts';
import type { NameEncoder } from './paging.ts';

/** `<name>text</name>`, the text escaped. */
export function element(name: string, text: string | number | boolean): string {
  return `<${name}>${escapeXml(String(text))}</${name}>`;
}

/** `element`, or nothing when there is no value to write. */
export function optionalElement(name: string, text: string | number | undefined): string {
  return text === undefined ? '' : element(name, text);
}

/** A listing's common prefixes, each in its own `<CommonPrefixes>` as S3 writes them. */
export function commonPrefixesXml(prefixes: readonly string[], encode: NameEncoder): string {
  return prefixes.map((prefix) => `<CommonPrefixes>${element('Prefix', encode(prefix))}</CommonPrefixes>`).join('');
}

/**
 * The account that owns every bucket and initiates every upload here, named by a canonical user
 * id in S3's shape (64 hex digits). S3 no longer sends a DisplayName beside it.
 */
const OWNER_ID = createHash('sha256').update('localplane objstore owner').digest('hex');

/** `<Owner>` (or `<Initiator>`) naming the owning account. */
export function accountXml(name: 'Owner' | 'Initiator'): string {
  return `<${name}>${element('ID', OWNER_ID)}</${name}>`;
}

/** S3's timestamps: ISO 8601 in UTC, to the whole second (S3 keeps no milliseconds). */
export function s3Timestamp(date: Date): string {
  return new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString();
}

/** Answers an S3 result document, `<root xmlns=...>content</root>`, with 200 unless told otherwise. */
export function sendXmlResult(res: ServerResponse, root: string, content: string, status = 200): void {
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<${root} xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${content}</${root}>`;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/xml');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
