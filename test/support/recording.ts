import { MASKED_SECRET_VALUE, maskSecrets } from '../../src/shared/errors.ts';
import { RecordingWriter } from '../../src/recording/har.ts';

export interface Recorded<T = any> {
  status: number;
  body: T;
}

/**
 * Sends requests to an upstream over HTTP and writes each exchange to a HAR file, with the API
 * key and the secrets of request bodies masked as `localplane record` masks them (the journal's
 * list). A stand-in for the record proxy: its exchanges are timed by the upstream's emulator
 * clock, so the gaps between them carry what the test moved that clock by.
 */
export class TestRecorder {
  private readonly writer: RecordingWriter;

  constructor(
    path: string,
    private readonly baseUrl: string,
    private readonly auth: { 'X-API-Key': string; 'X-Tenant-Id': string },
    /** The upstream's emulator clock, in microseconds. */
    private readonly clockNow: () => number,
  ) {
    this.writer = new RecordingWriter(path, { name: 'localplane-test-recorder', version: '1' });
  }

  get count(): number {
    return this.writer.count;
  }

  async call<T = any>(method: string, path: string, body?: unknown): Promise<Recorded<T>> {
    const startedDateTime = new Date(this.clockNow() / 1000).toISOString();
    const headers: Record<string, string> = { ...this.auth, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    const url = new URL(`${this.baseUrl}${path}`);
    const maskedBody = body === undefined ? undefined : JSON.stringify(maskSecrets(body));
    this.writer.append({
      startedDateTime,
      time: 1,
      request: {
        method,
        url: url.href,
        httpVersion: 'HTTP/1.1',
        headers: Object.entries(headers).map(([name, value]) => ({ name, value: name === 'X-API-Key' ? MASKED_SECRET_VALUE : value })),
        queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
        ...(maskedBody === undefined ? {} : { postData: { mimeType: 'application/json', text: maskedBody } }),
      },
      response: {
        status: response.status,
        statusText: response.statusText,
        httpVersion: 'HTTP/1.1',
        headers: [...response.headers].map(([name, value]) => ({ name, value })),
        content: { size: Buffer.byteLength(text), mimeType: response.headers.get('content-type') ?? '', text },
      },
      _masked: ['request.headers.x-api-key', ...(maskedBody !== undefined && maskedBody !== JSON.stringify(body) ? ['request.postData'] : [])],
    });
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  get = <T = any>(path: string) => this.call<T>('GET', path);
  post = <T = any>(path: string, body?: unknown) => this.call<T>('POST', path, body);
  patch = <T = any>(path: string, body?: unknown) => this.call<T>('PATCH', path, body);
  delete = <T = any>(path: string) => this.call<T>('DELETE', path);

  close(): void {
    this.writer.close();
  }
}
