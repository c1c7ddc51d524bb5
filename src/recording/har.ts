/**
 * Recordings are HAR 1.2 files (what browsers' devtools, mitmproxy and WireMock read and write):
 * `localplane record` writes one, `verify` and `fixtures from-recording` read one, and a HAR
 * saved from a browser is a recording too. The types name the fields localplane writes and reads;
 * a file may carry more (HAR's own optional fields, a tool's `_` extensions), which are kept.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { z } from 'zod';

const nameValue = z.object({ name: z.string(), value: z.string() }).loose();

/** A body as HAR holds it: text, or base64 (`encoding: "base64"`) for bytes that are not text. */
const harPostData = z
  .object({ mimeType: z.string().default(''), text: z.string().optional(), encoding: z.string().optional() })
  .loose();
const harContent = z
  .object({
    size: z.number().default(-1),
    mimeType: z.string().default(''),
    text: z.string().optional(),
    encoding: z.string().optional(),
  })
  .loose();

const harRequest = z
  .object({
    method: z.string().min(1),
    url: z.string().min(1),
    httpVersion: z.string().default('HTTP/1.1'),
    headers: z.array(nameValue).default([]),
    queryString: z.array(nameValue).default([]),
    postData: harPostData.optional(),
  })
  .loose();

const harResponse = z
  .object({
    status: z.number().int(),
    statusText: z.string().default(''),
    httpVersion: z.string().default('HTTP/1.1'),
    headers: z.array(nameValue).default([]),
    content: harContent.default({ size: -1, mimeType: '' }),
  })
  .loose();

const harEntry = z
  .object({
    startedDateTime: z.string(),
    time: z.number().default(0),
    request: harRequest,
    response: harResponse,
    /** What localplane masked in this exchange (`request.headers.x-api-key`, `response.content.credentials`, ...). */
    _masked: z.array(z.string()).optional(),
  })
  .loose();

const harFile = z.object({
  log: z
    .object({
      version: z.string(),
      creator: z.object({ name: z.string(), version: z.string() }).loose(),
      entries: z.array(harEntry),
    })
    .loose(),
});

export type HarHeader = z.infer<typeof nameValue>;
export type HarRequest = z.infer<typeof harRequest>;
export type HarResponse = z.infer<typeof harResponse>;
export type HarEntry = z.infer<typeof harEntry>;
export type HarLog = z.infer<typeof harFile>['log'];

/** A recording that cannot be read: the file and what is wrong with it. */
export class RecordingFileError extends Error {
  override name = 'RecordingFileError';
}

/**
 * Reads a recording whole; a file that is not HAR (or not JSON, or unreadable) throws a RecordingFileError naming the
 * field.
 */
export function readRecording(path: string): HarLog {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new RecordingFileError(`${path} cannot be read: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RecordingFileError(`${path} is not JSON: ${(error as Error).message}`);
  }
  const parsed = harFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RecordingFileError(
      `${path} is not a HAR recording: ${issue.path.join('.') || 'the file'}: ${issue.message}`,
    );
  }
  return parsed.data.log;
}

/** A body's bytes, as HAR holds them (text as UTF-8, base64 decoded); none when the body was not kept. */
export function bodyBytes(body: { text?: string; encoding?: string } | undefined): Buffer | undefined {
  if (body?.text === undefined) return undefined;
  return body.encoding === 'base64' ? Buffer.from(body.text, 'base64') : Buffer.from(body.text, 'utf8');
}

/** A body as JSON, or undefined when it is absent or not JSON. */
export function bodyJson(body: { text?: string; encoding?: string } | undefined): unknown {
  const bytes = bodyBytes(body);
  if (bytes === undefined || bytes.length === 0) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A header's value (the first of that name, any case), or undefined. */
export function headerValue(headers: readonly HarHeader[], name: string): string | undefined {
  const lower = name.toLowerCase();
  return headers.find((header) => header.name.toLowerCase() === lower)?.value;
}

const TAIL = '\n]}}\n';

/**
 * Writes a recording an exchange at a time: the file is a whole HAR document after every
 * append (each entry goes before the closing brackets), so a recording stopped at any point,
 * or read while it grows, is valid. Made 0600: answers can hold what the masking does not know.
 */
export class RecordingWriter {
  private readonly fd: number;
  /** Where the closing brackets begin. */
  private end: number;
  private entries = 0;

  constructor(
    readonly path: string,
    creator: { name: string; version: string },
    extensions: Record<`_${string}`, unknown> = {},
  ) {
    const head = `{"log":{"version":"1.2","creator":${JSON.stringify(creator)},${Object.entries(extensions)
      .map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)},`)
      .join('')}"entries":[`;
    this.fd = openSync(path, 'w', 0o600);
    writeSync(this.fd, head + TAIL);
    this.end = Buffer.byteLength(head);
  }

  append(entry: HarEntry): void {
    const text = `${this.entries === 0 ? '\n' : ',\n'}${JSON.stringify(entry)}`;
    writeSync(this.fd, text + TAIL, this.end);
    this.end += Buffer.byteLength(text);
    this.entries++;
  }

  get count(): number {
    return this.entries;
  }

  close(): void {
    closeSync(this.fd);
  }
}
