import { RecordingWriter, type HarHeader } from '../../src/recording/har.ts';

const MASK = '********';
/** Request headers the recorder masks. */
const SECRET_HEADERS = new Set(['x-api-key', 'authorization']);
/** JSON fields whose values the recorder masks wherever they are: an objects with secrets (credentials) wholly. */
const SECRET_FIELDS = new Set(['secret_access_key', 'session_token', 'client_secret']);

/** The JSON with its secrets masked as the recorder masks them, and the paths it masked. */
function masked(value: unknown, path: string, found: string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => masked(item, path, found));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => {
      const at = `${path}.${key}`;
      const secretValue = key === 'value' && path.endsWith('.secrets');
      if ((SECRET_FIELDS.has(key) || secretValue || key === 'credentials') && inner !== null && inner !== undefined) {
        found.push(at);
        return [key, key === 'credentials' && typeof inner === 'object' ? Object.fromEntries(Object.keys(inner).map((name) => [name, MASK])) : MASK];
      }
      return [key, masked(inner, at, found)];
    }),
  );
}

function maskedText(text: string, path: string, found: string[]): string {
  if (text === '') return text;
  try {
    return JSON.stringify(masked(JSON.parse(text), path, found));
  } catch {
    return text;
  }
}

/**
 * A client of an upstream localplane that writes each exchange to a HAR recording as the
 * recorder will (status, headers and bodies, with API keys, credentials, client secrets and
 * deployment secret values masked as "********"), and answers with the status and JSON.
 */
export class RecordingClient {
  constructor(
    private readonly baseUrl: string,
    private readonly writer: RecordingWriter,
    private readonly headers: Record<string, string>,
  ) {}

  async call<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const started = Date.now();
    const requestText = body === undefined ? undefined : JSON.stringify(body);
    const headers = { ...this.headers, ...(requestText === undefined ? {} : { 'content-type': 'application/json' }) };
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: requestText });
    const text = await response.text();
    const found: string[] = [];
    const maskHeaders = (pairs: [string, string][], where: string): HarHeader[] =>
      pairs.map(([name, value]) => {
        if (!SECRET_HEADERS.has(name.toLowerCase())) return { name, value };
        found.push(`${where}.${name.toLowerCase()}`);
        return { name, value: MASK };
      });
    const url = new URL(`${this.baseUrl}${path}`);
    this.writer.append({
      startedDateTime: new Date(started).toISOString(),
      time: Date.now() - started,
      request: {
        method,
        url: url.href,
        httpVersion: 'HTTP/1.1',
        headers: maskHeaders(Object.entries(headers), 'request.headers'),
        queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
        ...(requestText === undefined ? {} : { postData: { mimeType: 'application/json', text: maskedText(requestText, 'request.postData', found) } }),
      },
      response: {
        status: response.status,
        statusText: response.statusText,
        httpVersion: 'HTTP/1.1',
        headers: maskHeaders([...response.headers], 'response.headers'),
        content: { size: Buffer.byteLength(text), mimeType: response.headers.get('content-type') ?? '', text: maskedText(text, 'response.content', found) },
      },
      _masked: found,
    });
    return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
  }
}

export function recordingWriter(path: string): RecordingWriter {
  return new RecordingWriter(path, { name: 'localplane test recorder', version: '0' });
}
