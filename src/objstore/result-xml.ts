/** Writing the XML documents of the results the gateway answers itself. */
import type { ServerResponse } from 'node:http';

import { canonicalIdOf } from './bucket-directory.ts';
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
 * `<Owner>` (or `<Initiator>`) naming an account by its canonical user id; the shared account's
 * by default. S3 no longer sends a DisplayName beside it (not since November 2025).
 */
export function accountXml(name: 'Owner' | 'Initiator', canonicalId = canonicalIdOf(null)): string {
  return `<${name}>${element('ID', canonicalId)}</${name}>`;
}

/** S3's timestamps: ISO 8601 in UTC, to the whole second (S3 keeps no milliseconds). */
export function s3Timestamp(date: Date): string {
  return new Date(Math.floor(date.getTime() / 1000) * 1000).toISOString();
}

/** Answers 200 with an S3 result document: `<root xmlns=...>content</root>`. */
export function sendXmlResult(res: ServerResponse, root: string, content: string): void {
  const body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<${root} xmlns="http://s3.amazonaws.com/doc/2006-03-01/">${content}</${root}>`;
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/xml');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
