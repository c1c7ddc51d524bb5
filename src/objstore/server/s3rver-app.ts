/**
 * s3rver's Koa application, which answers the requests the gateway hands on (Delegate). s3rver
 * 3.7.1 is CommonJS without type declarations, so it is loaded with createRequire and described
 * by the minimal interfaces below.
 *
 * s3rver never binds a port here: the gateway's own http.Server calls its Koa request handler.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';

import { InFlight } from '../../shared/in-flight.ts';
import { s3rverModels } from '../storage/s3rver-models.ts';
import type { S3rverStore } from '../storage/s3rver-store.ts';
import type { Delegate } from './delegate.ts';
import { exchangeOf } from './exchange.ts';

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

interface AppModules {
  S3rver: S3rverConstructor;
  DUMMY_ACCOUNT: unknown;
}
let loadedModules: AppModules | null = null;

/** s3rver's Koa application takes a tenth of a second to load: only once a request needs it, not at start. */
function appModules(): AppModules {
  return (loadedModules ??= {
    S3rver: requireCjs('s3rver'),
    DUMMY_ACCOUNT: (requireCjs('s3rver/lib/models/account.js') as { DUMMY_ACCOUNT: unknown }).DUMMY_ACCOUNT,
  });
}

/** The S3 error code s3rver answered with, for the journal. */
function errorCodeOf(err: unknown): string {
  return err instanceof s3rverModels().S3Error ? err.code : 'InternalError';
}

/** s3rver's application over the given store, with the gateway's middleware in front of its own. */
function s3rverAppOver(store: S3rverStore): S3rverApp {
  const { S3rver, DUMMY_ACCOUNT } = appModules();
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
export function createS3rverApp(store: () => S3rverStore): Delegate {
  let app: S3rverApp | null = null;
  const requests = new InFlight();
  let callback: ReturnType<S3rverApp['callback']> | null = null;
  const handler = () => {
    app ??= s3rverAppOver(store());
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
