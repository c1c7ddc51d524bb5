// Recordings as HAR 1.2: the writer leaves a whole document after each exchange; the reader takes HAR from other tools
// and names what is wrong.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  bodyBytes,
  bodyJson,
  headerValue,
  readRecording,
  RecordingFileError,
  RecordingWriter,
  type HarEntry,
} from '../../src/recording/har.ts';

const dir = mkdtempSync(join(tmpdir(), 'localplane-har-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const entry = (path: string, status: number, body: unknown): HarEntry => ({
  startedDateTime: '2026-11-26T00:00:00.000Z',
  time: 3,
  request: {
    method: 'GET',
    url: `https://api.example${path}`,
    httpVersion: 'HTTP/1.1',
    headers: [{ name: 'Accept', value: 'application/json' }],
    queryString: [],
  },
  response: {
    status,
    statusText: '',
    httpVersion: 'HTTP/1.1',
    headers: [{ name: 'Content-Type', value: 'application/json' }],
    content: { size: -1, mimeType: 'application/json', text: JSON.stringify(body) },
  },
});

describe('recordings', () => {
  it('is a whole HAR document after every exchange, private to its owner', () => {
    const path = join(dir, 'growing.har');
    const writer = new RecordingWriter(
      path,
      { name: 'localplane', version: '0.1.0' },
      { _localplane: { upstream: 'https://api.example' } },
    );
    expect(readRecording(path).entries).toEqual([]);
    writer.append(entry('/a', 200, { id: 1 }));
    expect(readRecording(path).entries.map((read) => read.request.url)).toEqual(['https://api.example/a']);
    writer.append(entry('/b', 404, { detail: 'Not Found' }));
    writer.close();
    const log = readRecording(path);
    expect(log.entries.map((read) => read.response.status)).toEqual([200, 404]);
    expect(log._localplane).toEqual({ upstream: 'https://api.example' });
    expect(JSON.parse(readFileSync(path, 'utf8')).log.version).toBe('1.2');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("reads a browser's HAR: base64 bodies, fields it does not name kept, headers by any case", () => {
    const path = join(dir, 'browser.har');
    const saved = entry('/c', 200, {});
    saved.response.content = {
      size: 3,
      mimeType: 'application/octet-stream',
      text: Buffer.from([0, 1, 2]).toString('base64'),
      encoding: 'base64',
    };
    writeFileSync(
      path,
      JSON.stringify({
        log: {
          version: '1.2',
          creator: { name: 'WebInspector', version: '537.36' },
          pages: [],
          entries: [{ ...saved, _initiator: { type: 'script' } }],
        },
      }),
    );
    const [read] = readRecording(path).entries;
    expect(bodyBytes(read!.response.content)).toEqual(Buffer.from([0, 1, 2]));
    expect(read!._initiator).toEqual({ type: 'script' });
    expect(headerValue(read!.response.headers, 'content-type')).toBe('application/json');
    expect(bodyJson(entry('/d', 200, { a: [1] }).response.content)).toEqual({ a: [1] });
    expect(bodyJson({ text: 'not json' })).toBeUndefined();
  });

  it('names what is wrong with a file that is not a recording', () => {
    const notJson = join(dir, 'not.json');
    writeFileSync(notJson, '{"log":');
    expect(() => readRecording(notJson)).toThrow(RecordingFileError);
    expect(() => readRecording(notJson)).toThrow(/not JSON/);
    const noStatus = join(dir, 'no-status.har');
    writeFileSync(
      noStatus,
      JSON.stringify({
        log: {
          version: '1.2',
          creator: { name: 'x', version: '1' },
          entries: [{ startedDateTime: 'x', request: { method: 'GET', url: '/' }, response: {} }],
        },
      }),
    );
    expect(() => readRecording(noStatus)).toThrow(/is not a HAR recording: log\.entries\.0\.response\.status: /);
    expect(() => readRecording(join(dir, 'missing.har'))).toThrow(/cannot be read/);
  });
});
