/**
 * s3rver wiring. s3rver 3.7.1 is a CommonJS Koa application without type declarations, so it
 * is loaded with createRequire and described by the minimal interfaces below.
 *
 * s3rver never binds a port here: the gateway's own http.Server calls its Koa request handler.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';

import { InFlight } from '../../shared/in-flight.ts';
import { GatewayError } from '../server/errors.ts';
import { exchangeOf } from '../server/exchange.ts';
import type { S3rverStore, S3rverSubresource } from './s3rver-store.ts';

interface KoaContext {
  req: IncomingMessage;
  res: ServerResponse;
  state: Record<string, unknown>;
}
type KoaMiddleware = (ctx: KoaContext, next: () => Promise<unknown>) => unknown;

interface S3rverApp {
  store: S3rverStore;
  /** Koa's prototype of every request context: s3rver's controllers read `ctx.store` from it. */
  context: { store: S3rverStore };
  middleware: KoaMiddleware[];
  logger: { close(): void };
  on(event: 'error', listener: (err: unknown, ctx?: KoaContext) => void): unknown;
  callback(): (req: IncomingMessage, res: ServerResponse) => Promise<unknown> | unknown;
}

type S3rverConstructor = new (options: Record<string, unknown>) => S3rverApp;

const requireCjs = createRequire(import.meta.url);

interface S3rverModules {
  S3rver: S3rverConstructor;
  S3Error: new (...args: never[]) => Error & { code: string; status: number };
  S3Object: new (bucket: string, key: string, content: null, headers: Readonly<Record<string, unknown>>) => { metadata: Record<string, string> };
  TaggingConfiguration: { validate(xml: string): S3rverSubresource };
  DUMMY_ACCOUNT: unknown;
}
let modules: S3rverModules | null = null;

/** s3rver's Koa application and models take a tenth of a second to load: only once a request needs them, not at start. */
function s3rverModules(): S3rverModules {
  return (modules ??= {
    S3rver: requireCjs('s3rver'),
    S3Error: requireCjs('s3rver/lib/models/error.js'),
    S3Object: requireCjs('s3rver/lib/models/object.js'),
    TaggingConfiguration: (requireCjs('s3rver/lib/models/config.js') as { TaggingConfiguration: S3rverModules['TaggingConfiguration'] }).TaggingConfiguration,
    DUMMY_ACCOUNT: (requireCjs('s3rver/lib/models/account.js') as { DUMMY_ACCOUNT: unknown }).DUMMY_ACCOUNT,
  });
}

/** The S3 error code s3rver answered with, for the journal. */
function errorCodeOf(err: unknown): string {
  return err instanceof s3rverModules().S3Error ? err.code : 'InternalError';
}

/** Runs one of s3rver's models, its S3 errors thrown as the gateway's. */
function modelled<T>(make: () => T): T {
  const { S3Error } = s3rverModules();
  try {
    return make();
  } catch (err) {
    if (err instanceof S3Error) throw new GatewayError({ status: err.status, code: err.code, message: err.message });
    throw err;
  }
}

/**
 * The metadata s3rver keeps for an object put with these request headers (its own selection);
 * an invalid one (e.g. InvalidStorageClass) is thrown as the S3 error s3rver would answer.
 */
export function objectMetadata(
  bucket: string,
  key: string,
  headers: Readonly<Record<string, unknown>>,
): Record<string, string> {
  return modelled(() => new (s3rverModules().S3Object)(bucket, key, null, headers).metadata);
}

/** A Tagging document as s3rver keeps an object's tags (MalformedXML when not well-formed). */
export function taggingSubresource(xml: string): S3rverSubresource {
  return modelled(() => s3rverModules().TaggingConfiguration.validate(xml));
}

/** s3rver's application over the given store, with the gateway's middleware in front of its own. */
function createS3rverApp(store: S3rverStore): S3rverApp {
  const { S3rver, DUMMY_ACCOUNT } = s3rverModules();
  const app = new S3rver({
    directory: store.rootDirectory,
    silent: true,
    // Path-style only. s3rver would otherwise treat any Host that is not an IP address or
    // 'localhost' as a virtual-host bucket, and Hosts matching '<bucket>.s3.<serviceEndpoint>' as
    // well; an unguessable endpoint keeps it from rewriting paths behind the gateway's back.
    vhostBuckets: false,
    serviceEndpoint: `${randomUUID()}.invalid`,
    configureBuckets: [],
    resetOnClose: false,
    allowMismatchedSignatures: false,
  });
  app.store = app.context.store = store;

  // Registering a listener also keeps Koa from installing its default console error logger.
  // s3rver renders the error's `detail` after its Message: S3 ends every error document with the response's ids.
  app.on('error', (err, ctx) => {
    const exchange = ctx?.req ? exchangeOf(ctx.req) : undefined;
    if (!exchange) return;
    exchange.errorCode = errorCodeOf(err);
    if (err instanceof Error) {
      const withDetail = err as Error & { detail?: Record<string, unknown> };
      withDetail.detail = { ...withDetail.detail, RequestId: exchange.requestId, HostId: exchange.hostId };
    }
  });

  // Runs before all of s3rver's own middleware. Requests reach s3rver without authentication
  // (s3rver only knows its built-in S3RVER key), so mark the ones the gateway authorised as
  // authenticated; otherwise s3rver refuses response-* overrides ("anonymous GET requests").
  app.middleware.unshift((ctx, next) => {
    if (exchangeOf(ctx.req)?.authenticated) ctx.state['account'] = DUMMY_ACCOUNT;
    return next();
  });

  return app;
}

/** s3rver's Koa application over the store `store()` gives, both loaded on the first request it has to answer. */
export function createS3rverHandler(store: () => S3rverStore): { handle(req: IncomingMessage, res: ServerResponse): void; settled(): Promise<void>; close(): void } {
  let app: S3rverApp | null = null;
  const requests = new InFlight();
  let callback: ReturnType<S3rverApp['callback']> | null = null;
  const handler = () => {
    app ??= createS3rverApp(store());
    return (callback ??= app.callback());
  };
  const fail = (res: ServerResponse) => {
    if (!res.headersSent) {
      res.statusCode = 500;
      res.end();
    } else {
      res.destroy();
    }
  };
  return {
    handle(req, res) {
      try {
        requests.track(Promise.resolve(handler()(req, res)).catch(() => fail(res)));
      } catch {
        fail(res);
      }
    },
    settled: () => requests.settled(),
    close() {
      try {
        app?.logger.close();
      } catch {
        // nothing to release
      }
    },
  };
}
