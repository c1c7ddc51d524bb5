import { Hono, type Context, type Env, type MiddlewareHandler, type Schema as HonoSchema } from 'hono';
import { mergePath } from 'hono/utils/url';
import { RememberingRouter, rememberedByPath } from '../shared/routing.ts';
import { jsonBody, optionalJsonBody, pathParams, queryParams } from '../shared/validation.ts';
import { requestErrors } from './errors.ts';
import type {
  DocumentedRoute,
  ErrorResponse,
  GuardDocumentation,
  RouteDeclaration,
  RouteInput,
  Schema,
  SecurityRequirement,
} from './declarations.ts';
import { forcedResponse } from './prefer.ts';

/** Both requirements met (two guards in a row): each alternative of one with each of the other. */
function jointly(
  first: SecurityRequirement | undefined,
  second: SecurityRequirement | undefined,
): SecurityRequirement | undefined {
  if (!first || !second) return first ?? second;
  return first.flatMap((schemes) => second.map((others) => [...schemes, ...others]));
}

/**
 * A hono app whose routes declare their input and answers once (in the spirit of
 * @hono/zod-openapi's `app.openapi(route, handler)`): the declared schemas are validated with
 * the FastAPI-faithful helpers, the handler gets the typed input, `Prefer: code=` forces a
 * documented error, and the declarations, joined through `route()`, make the served OpenAPI document.
 */
export class OpenApiHono<E extends Env = Env> extends Hono<E> {
  readonly documented: DocumentedRoute[] = [];
  private readonly guardErrors: ErrorResponse[] = [];
  private guardSecurity: SecurityRequirement | undefined;
  private readonly folderGuards: { folder: string; documentation: GuardDocumentation }[] = [];

  /** `tag` groups the app's own routes in the document (mounted apps keep theirs). */
  constructor(private readonly tag = 'localplane') {
    super({ router: new RememberingRouter() });
  }

  /**
   * Middleware for every request of this app, and what it documents (its errors, the credentials it reads) on each
   * route declared after it.
   */
  guard({ errors, security }: GuardDocumentation, ...middleware: MiddlewareHandler<E>[]): this {
    this.guardErrors.push(...errors);
    this.guardSecurity = jointly(this.guardSecurity, security);
    for (const handler of middleware) this.use('*', handler);
    return this;
  }

  /**
   * Middleware for every request under `folder` (e.g. `/_localplane`), and what it documents,
   * on each route mounted there afterwards.
   */
  guardFolder(folder: string, documentation: GuardDocumentation, ...middleware: MiddlewareHandler<E>[]): this {
    this.folderGuards.push({ folder, documentation });
    for (const handler of middleware) this.use(`${folder}/*`, handler);
    return this;
  }

  openapi<P extends Schema, Q extends Schema, B extends Schema>(
    declaration: RouteDeclaration<P, Q, B>,
    handler: (c: Context<E>, input: RouteInput<P, Q, B>) => Response | Promise<Response>,
  ): this {
    // The route's own errors first: `Prefer: code=400` answers the first example of that status.
    const errors: ErrorResponse[] = [...(declaration.errors ?? []), ...this.guardErrors, ...requestErrors(declaration)];
    this.documented.push({
      declaration: declaration as RouteDeclaration,
      path: declaration.path,
      tag: this.tag,
      errors,
      security: this.guardSecurity,
    });
    // The route's path decides its parameters: a polled resource's are validated once.
    const validParams =
      declaration.params && rememberedByPath((_path, c: Context) => pathParams(c, declaration.params!));
    this.on(declaration.method.toUpperCase(), declaration.path, async (c) => {
      const forced = forcedResponse(c.req.header('prefer'), errors);
      if (forced) return c.json(forced.body as object, forced.status as 400);
      const input = {
        params: validParams?.(c.req.path, c),
        query: declaration.query && queryParams(c, declaration.query, declaration.queryLists),
        body: declaration.body && (await (declaration.bodyOptional ? optionalJsonBody : jsonBody)(c, declaration.body)),
      } as RouteInput<P, Q, B>;
      return handler(c as Context<E>, input);
    });
    return this;
  }

  /** Mounts a sub-app as hono does; an OpenApiHono's declarations join this app's under the prefix. */
  override route<SubEnv extends Env, SubSchema extends HonoSchema, SubBasePath extends string>(
    path: string,
    app: Hono<SubEnv, SubSchema, SubBasePath>,
  ): this {
    if (app instanceof OpenApiHono) {
      for (const route of app.documented) {
        const fullPath = mergePath(path, route.path);
        const guarded = this.folderGuards.filter(
          ({ folder }) => fullPath === folder || fullPath.startsWith(`${folder}/`),
        );
        // Into the route's own list, which its handler reads for `Prefer: code=`.
        route.errors.push(...guarded.flatMap(({ documentation }) => documentation.errors));
        const security = guarded.reduce(
          (required, { documentation }) => jointly(required, documentation.security),
          route.security,
        );
        this.documented.push({ ...route, path: fullPath, security });
      }
    }
    super.route(path, app);
    return this;
  }
}
