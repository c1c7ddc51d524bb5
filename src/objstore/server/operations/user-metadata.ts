/**
 * User metadata (`x-amz-meta-*`) values as S3 answers them: a value with characters outside
 * US-ASCII comes back RFC 2047-encoded (`=?UTF-8?B?...?=`), whether it was sent as raw bytes or
 * itself RFC 2047-encoded; a value that is ASCII once decoded comes back as is.
 *
 * Values are stored as Node received them: header bytes read as Latin-1, one character a byte.
 */

import { headerBytesAsText, utf8OfHeaderBytes } from '../header-bytes.ts';

const ENCODED_WORD = /^=\?([^?]+)\?([BbQq])\?([^?]*)\?=$/;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function decodeEncodedWord(charset: string, encoding: string, text: string): string | null {
  const latin1 =
    encoding.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64').toString('latin1')
      : text
          .replace(/_/g, ' ')
          .replace(/=([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  switch (charset.toLowerCase()) {
    case 'utf-8':
      return utf8OfHeaderBytes(latin1);
    case 'iso-8859-1':
    case 'us-ascii':
      return latin1;
    default:
      return null;
  }
}

/** The text a stored value stands for: an encoded word decoded, raw bytes read as UTF-8 where they are UTF-8. */
export function userMetadataText(stored: string): string {
  const word = ENCODED_WORD.exec(stored);
  if (word) return decodeEncodedWord(word[1]!, word[2]!, word[3]!) ?? stored;
  // Characters beyond Latin-1 cannot have come from header bytes: the value is text already.
  if ([...stored].some((ch) => ch.charCodeAt(0) > 0xff)) return stored;
  return headerBytesAsText(stored);
}

/** The header value S3 answers for a stored user metadata value. */
export function userMetadataHeaderValue(stored: string): string {
  const text = userMetadataText(stored);
  return PRINTABLE_ASCII.test(text) ? text : `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}
