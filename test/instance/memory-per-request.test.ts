/**
 * Memory per request is bounded: what a request sends is released once it is
 * answered, whatever its size, and a large body is never held whole while it is checked. The
 * instance runs in a process of its own (support/memory-probe.ts) that reports what it still
 * holds after a full garbage collection and its peak resident set, so the figures are the
 * server's alone.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { fullKey, workspaceByTier, type FixturesView } from '../support/instance.ts';
import type { InProcessRequests, ProbeMemory, ProbeMessage } from './support/memory-probe.ts';
import { signedHeaders } from '../support/signed-requests.ts';

const MiB = 1024 * 1024;
const MB = 1000 * 1000;
/** Objstore requests of each kind: each would leave its body held, 400 MB of forms or 100 MB of chunks in all. */
const REQUESTS = 400;
/**
 * API requests of 1 MiB answered with their value echoed: each would leave 2 MiB held, 200 MB in all, four times
 * RETAINED_BOUND.
 */
const API_REQUESTS = 100;
/** Requests of a kind made before measuring, so that what they load (modules, compiled code) is there before. */
const WARM_UP = 20;
/**
 * What the requests may leave: their journal entries, with at most 8 KiB of each body and of
 * each answer, below what the bodies themselves would hold.
 */
const RETAINED_BOUND = 50 * MB;
/** Requests in flight at once. */
const CONCURRENCY = 4;

class Probe {
  private constructor(
    private readonly child: ChildProcess,
    readonly apiUrl: string,
    readonly objstoreUrl: string,
  ) {}

  static start(): Promise<Probe> {
    const child = fork(fileURLToPath(new URL('./support/memory-probe.ts', import.meta.url)), [], {
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      child.once('message', (urls: { apiUrl: string; objstoreUrl: string }) =>
        resolve(new Probe(child, urls.apiUrl, urls.objstoreUrl)),
      );
      child.once('exit', (code) => reject(new Error(`the probe exited (${code}) before it listened`)));
    });
  }

  /** Sends a message and waits for the answer; fails if the instance exits first (out of memory). */
  private ask<T>(message: ProbeMessage): Promise<T> {
    return new Promise((resolve, reject) => {
      const exited = (code: number | null, signal: string | null) =>
        reject(new Error(`the instance exited (${code ?? signal})`));
      this.child.once('exit', exited);
      this.child.once('message', (answer: T) => {
        this.child.off('exit', exited);
        resolve(answer);
      });
      this.child.send(message);
    });
  }

  measure = () => this.ask<ProbeMemory>('measure');
  resetPeak = () => this.ask<string>('reset-peak');
  /** Requests to an in-process instance in the probe's process; their statuses. */
  requestInProcess = (requests: InProcessRequests) => this.ask<number[]>(requests);

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      if (this.child.exitCode !== null || !this.child.connected) resolve();
      else this.child.send('stop');
    });
  }
}

interface Sent {
  /**
   * 'cut': the server closed the connection before the answer was read (it may answer a refused upload and close at
   * once).
   */
  status: number | 'cut';
  body: string;
}

/** Until the request takes more of its body, or is closed. */
function writable(request: http.ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      request.off('drain', done);
      request.off('close', done);
      resolve();
    };
    request.on('drain', done);
    request.on('close', done);
  });
}

/**
 * Sends a request whose body is written piece by piece as the connection takes it, until it ends or the server answers.
 */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  pieces: Iterable<Buffer | string>,
  agent: http.Agent | false,
): Promise<Sent> {
  return new Promise((resolve) => {
    let answered = false;
    const request = http.request(url, { method, headers, agent }, (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString() });
        if (!request.writableEnded) request.destroy();
      });
      response.on('error', () => resolve({ status: 'cut', body: '' }));
    });
    request.on('error', () => resolve({ status: 'cut', body: '' }));
    void (async () => {
      for (const piece of pieces) {
        if (answered || request.destroyed) return;
        if (!request.write(piece)) await writable(request);
      }
      request.end();
    })();
  });
}

/** A GET whose answer is counted as it arrives, not kept: `body` is how many bytes came. */
function download(url: string): Promise<Sent> {
  return new Promise((resolve) => {
    http
      .get(url, (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () => resolve({ status: response.statusCode!, body: String(bytes) }));
        response.on('error', () => resolve({ status: 'cut', body: '' }));
      })
      .on('error', () => resolve({ status: 'cut', body: '' }));
  });
}

/** `count` requests made by `one`, CONCURRENCY at a time. */
async function repeat(count: number, one: () => Promise<Sent>): Promise<Sent[]> {
  const results: Sent[] = [];
  let started = 0;
  const worker = async () => {
    while (started < count) {
      started++;
      results.push(await one());
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return results;
}

/** `size` bytes of a body in 1 MiB pieces, between a head and a tail. */
function* framed(head: string, size: number, tail: string): Generator<Buffer | string> {
  const piece = Buffer.alloc(MiB, 'b');
  yield head;
  for (let left = size; left > 0; left -= piece.length) yield left >= piece.length ? piece : piece.subarray(0, left);
  yield tail;
}

const ZERO_SIGNATURE = '0'.repeat(64);

describe('memory per request', { timeout: 180_000 }, () => {
  let probe: Probe;
  let fixtures: FixturesView;
  const admin = async <T>(method: string, path: string): Promise<T> => {
    const response = await fetch(`${probe.apiUrl}/_localplane${path}`, { method });
    return (response.status === 204 ? undefined : await response.json()) as T;
  };
  const refusalsJournalled = async () =>
    (await admin<{ count: number }>('GET', '/requests/count?source=objstore&status=403')).count;

  beforeAll(async () => {
    probe = await Probe.start();
    fixtures = await admin<FixturesView>('GET', '/fixtures');
  });
  afterAll(() => probe?.stop());
  beforeEach(() => admin('DELETE', '/requests'));

  /** What `count` requests leave held once answered (after WARM_UP of the same kind). */
  async function retainedAfter(count: number, one: () => Promise<Sent>): Promise<{ retained: number; sent: Sent[] }> {
    await repeat(WARM_UP, one);
    const before = await probe.measure();
    const sent = await repeat(count, one);
    const after = await probe.measure();
    return { retained: after.retained - before.retained, sent };
  }

  /** How far one request raises the resident set above what it was. */
  async function peakOf(one: () => Promise<Sent>): Promise<{ growth: number; sent: Sent }> {
    await probe.resetPeak();
    const before = await probe.measure();
    const sent = await one();
    const after = await probe.measure();
    return { growth: after.peakRss - before.rss, sent };
  }

  /** A 1 MiB body for POST /api/v1/bulk-exports, answered 422 with its 1 MiB value echoed. */
  const echoedBody = () => {
    const head = '{"session_id": "z", "start_time": "q", "bulk_export_destination_id": "';
    return `${head}${'y'.repeat(MiB - head.length - 2)}"}`;
  };

  it('100 API requests with 1 MiB JSON bodies answered 422 (their values echoed) leave no body held', async () => {
    const workspace = workspaceByTier(fixtures, 'plus');
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const body = echoedBody();
    const headers = {
      'x-api-key': workspace.api_key,
      'content-type': 'application/json',
      'content-length': String(body.length),
    };
    const { retained, sent } = await retainedAfter(API_REQUESTS, () =>
      send(`${probe.apiUrl}/api/v1/bulk-exports`, 'POST', headers, [body], agent),
    );
    agent.destroy();

    expect(new Set(sent.map((result) => result.status))).toEqual(new Set([422]));
    expect(sent[0]!.body.length).toBeGreaterThan(MiB);
    expect(retained).toBeLessThan(RETAINED_BOUND);
    const [entry] = (
      await admin<{ requests: { request: { body: { text: string; size: number; truncated: boolean } } }[] }>(
        'GET',
        '/requests?limit=1',
      )
    ).requests;
    expect(entry!.request.body).toMatchObject({ size: MiB, truncated: true });
    expect(entry!.request.body.text).toHaveLength(8 * 1024);
  });

  it('2,000 journalled GETs leave their entries held, not their requests (headers, sockets): under 3 KB each', async () => {
    const headers = { 'x-api-key': workspaceByTier(fixtures, 'plus').api_key };
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const count = 2000;
    const { retained, sent } = await retainedAfter(count, () =>
      send(`${probe.apiUrl}/v2/deployments?limit=1`, 'GET', headers, [], agent),
    );
    agent.destroy();

    expect(new Set(sent.map((result) => result.status))).toEqual(new Set([200]));
    expect(retained / count).toBeLessThan(3000);
  });

  it('as many such requests to an in-process instance (no socket) leave no body held either', async () => {
    const api_key = workspaceByTier(fixtures, 'plus').api_key;
    const requests = (count: number) =>
      probe.requestInProcess({
        path: '/api/v1/bulk-exports',
        init: {
          method: 'POST',
          headers: { 'x-api-key': api_key, 'content-type': 'application/json' },
          body: echoedBody(),
        },
        count,
      });
    await requests(WARM_UP);
    const before = await probe.measure();
    const statuses = await requests(API_REQUESTS);
    const after = await probe.measure();
    expect(new Set(statuses)).toEqual(new Set([422]));
    expect(after.retained - before.retained).toBeLessThan(RETAINED_BOUND);
  });

  describe('browser form uploads', () => {
    const boundary = '----memory-per-request';
    /** A form whose policy signature is zeros: refused (SignatureDoesNotMatch) from its fields, before its file. */
    function refusedForm(fileSize: number): () => Promise<Sent> {
      const key = fullKey(fixtures);
      const date = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
      const policy = Buffer.from(
        JSON.stringify({
          expiration: new Date(Date.now() + 3_600_000).toISOString(),
          conditions: [{ bucket: fixtures.objstore.buckets[0] }],
        }),
      ).toString('base64');
      const fields = {
        key: 'memory/${filename}',
        policy,
        'x-amz-algorithm': 'AWS4-HMAC-SHA256',
        'x-amz-credential': `${key.access_key_id}/${date.slice(0, 8)}/us-east-1/s3/aws4_request`,
        'x-amz-date': date,
        'x-amz-signature': ZERO_SIGNATURE,
      };
      const head =
        Object.entries(fields)
          .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
          .join('') +
        (`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="large.bin"\r\nContent-Type: ` +
          `application/octet-stream\r\n\r\n`);
      const tail = `\r\n--${boundary}--\r\n`;
      const headers = {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(Buffer.byteLength(head) + fileSize + tail.length),
      };
      return () =>
        send(
          `${probe.objstoreUrl}/${fixtures.objstore.buckets[0]}`,
          'POST',
          headers,
          framed(head, fileSize, tail),
          false,
        );
    }

    it('400 forms refused with a 1 MiB file leave no form held', async () => {
      const { retained, sent } = await retainedAfter(REQUESTS, refusedForm(MiB));
      expect(
        sent
          .filter((result) => result.status !== 'cut')
          .every((result) => result.status === 403 && result.body.includes('SignatureDoesNotMatch')),
      ).toBe(true);
      expect(await refusalsJournalled()).toBe(WARM_UP + REQUESTS);
      expect(retained).toBeLessThan(RETAINED_BOUND);
    });

    it('a 256 MiB form is refused from its fields, its file never held', async () => {
      // Just under 256 MiB in all: the most a form could be when it was read whole.
      const { growth, sent } = await peakOf(refusedForm(256 * MiB - 4096));
      expect(sent.status === 'cut' || sent.status === 403).toBe(true);
      expect(await refusalsJournalled()).toBe(1);
      expect(growth).toBeLessThan(64 * MB);
    });
  });

  it(
    'a 128 MiB object downloads from the object browser (/_localplane/objstore/buckets/{bucket}/object/content) ' +
      'streamed, never held whole',
    async () => {
      const size = 128 * MiB;
      const key = fullKey(fixtures);
      const bucket = fixtures.objstore.buckets[0]!;
      const path = `/${bucket}/memory/download.bin`;
      const headers = await signedHeaders(
        probe.objstoreUrl,
        { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key },
        {
          method: 'PUT',
          path,
          headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
        },
      );
      headers['content-length'] = String(size);
      expect((await send(`${probe.objstoreUrl}${path}`, 'PUT', headers, framed('', size, ''), false)).status).toBe(200);

      const { growth, sent } = await peakOf(() =>
        download(`${probe.apiUrl}/_localplane/objstore/buckets/${bucket}/object/content?key=memory/download.bin`),
      );
      expect(sent).toEqual({ status: 200, body: String(size) });
      expect(growth).toBeLessThan(64 * MB);
    },
  );

  describe('aws-chunked uploads', () => {
    /**
     * A PutObject signed by a fixture key whose one chunk of `chunkSize` bytes is signed with zeros: refused at the
     * chunk's end.
     */
    function badlySignedChunk(chunkSize: number): () => Promise<Sent> {
      const key = fullKey(fixtures);
      const path = `/${fixtures.objstore.buckets[0]}/memory/chunked.bin`;
      const head = `${chunkSize.toString(16)};chunk-signature=${ZERO_SIGNATURE}\r\n`;
      const tail = `\r\n0;chunk-signature=${ZERO_SIGNATURE}\r\n\r\n`;
      return async () => {
        const headers = await signedHeaders(
          probe.objstoreUrl,
          { accessKeyId: key.access_key_id, secretAccessKey: key.secret_access_key },
          {
            method: 'PUT',
            path,
            headers: {
              'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
              'content-encoding': 'aws-chunked',
              'x-amz-decoded-content-length': String(chunkSize),
            },
          },
        );
        headers['content-length'] = String(head.length + chunkSize + tail.length);
        return send(`${probe.objstoreUrl}${path}`, 'PUT', headers, framed(head, chunkSize, tail), false);
      };
    }

    it('400 uploads with a 256 KiB chunk signed with zeros leave no chunk held', async () => {
      const { retained, sent } = await retainedAfter(REQUESTS, badlySignedChunk(256 * 1024));
      expect(
        sent
          .filter((result) => result.status !== 'cut')
          .every((result) => result.status === 403 && result.body.includes('SignatureDoesNotMatch')),
      ).toBe(true);
      expect(await refusalsJournalled()).toBe(WARM_UP + REQUESTS);
      expect(retained).toBeLessThan(RETAINED_BOUND);
    });

    it('a 256 MiB chunk signed with zeros streams through, never held whole, and is refused', async () => {
      const { growth, sent } = await peakOf(badlySignedChunk(256 * MiB));
      expect(sent.status === 'cut' || sent.status === 403).toBe(true);
      expect(await refusalsJournalled()).toBe(1);
      expect(growth).toBeLessThan(128 * MB);
    });
  });
});
