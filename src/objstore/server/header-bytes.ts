/**
 * Header values as Node hands them over: each byte received read as one Latin-1 character. S3
 * reads the bytes themselves, which clients send UTF-8 encoded (the AWS SDK does, for user metadata).
 */
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The UTF-8 text of the bytes received, or null when they are not UTF-8. */
export function utf8OfHeaderBytes(value: string): string | null {
  try {
    return utf8.decode(Buffer.from(value, 'latin1'));
  } catch {
    return null;
  }
}

/** The text a received header value stands for: its bytes read as UTF-8 where they are UTF-8, else as received. */
export function headerBytesAsText(value: string): string {
  return /^[\x00-\x7f]*$/.test(value) ? value : (utf8OfHeaderBytes(value) ?? value);
}
