import { describe, expect, it } from 'vitest';
import type { SecurityScheme } from '../../src/openapi/declarations.ts';
import { openapiDocument } from '../../src/openapi/document.ts';
import { OpenApiHono } from '../../src/openapi/routes.ts';
import { useLocalplane, workspaceByTier } from '../support/instance.ts';
import { expectSchema } from '../support/openapi.ts';

describe("localplane's own OpenAPI document", () => {
  const ctx = useLocalplane();

  it('is OpenAPI 3.1 with the component schemas of every response family', () => {
    const document = openapiDocument();
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'BulkExportDestination',
        'BulkExport',
        'BulkExportRun',
        'Deployment',
        'DeploymentsList',
        'Revision',
        'RevisionsList',
        'OAuthProviderResponse',
        'CodehostIntegration',
        'CodehostRepository',
        'HTTPValidationError',
      ]),
    );
  });

  it('accepts a real response and refuses one with a field missing, extra or of the wrong type', async () => {
    const acme = workspaceByTier(ctx.fixtures, 'plus');
    const page = await ctx.api.as(acme).get('/v2/deployments?limit=2');
    expectSchema(page.body, 'DeploymentsList');
    const deployment = page.body.resources[0];
    expectSchema(deployment, 'Deployment');
    const { status: _status, ...withoutStatus } = deployment;
    expect(() => expectSchema(withoutStatus, 'Deployment')).toThrow(/status/);
    expect(() => expectSchema({ ...deployment, surprise: 1 }, 'Deployment')).toThrow(/additional/);
    expect(() => expectSchema({ ...deployment, created_at: 'yesterday' }, 'Deployment')).toThrow(/date-time/);
    expect(() => expectSchema({ ...deployment, status: 'SLEEPING' }, 'Deployment')).toThrow(/allowed values/);
  });

  it('describes the 422 body', async () => {
    const acme = workspaceByTier(ctx.fixtures, 'plus');
    const response = await ctx.api.as(acme).get('/v2/deployments?limit=0');
    expect(response.status).toBe(422);
    expectSchema(response.body, 'HTTPValidationError');
    expect(() => expectSchema({ detail: [{ loc: 'body', msg: 'x', type: 'y' }] }, 'HTTPValidationError')).toThrow();
  });

  it(
    "gives each route its guards' security, both guards' when a guarded app is mounted in a guarded folder, and " +
      'names each scheme once',
    () => {
      const header = (id: string, name: string): SecurityScheme => ({
        id,
        scheme: { type: 'apiKey', in: 'header', name },
      });
      const [key, tenant, token] = [
        header('Key', 'X-Key'),
        header('Tenant', 'X-Tenant'),
        { id: 'Token', scheme: { type: 'http', scheme: 'bearer' } } satisfies SecurityScheme,
      ];
      const ok = () => new Response();
      const declaration = (path: string) =>
        ({ method: 'get', path, summary: path, response: { status: 200, description: 'ok' } }) as const;
      const guarded = new OpenApiHono('guarded')
        .openapi(declaration('/open'), ok)
        .guard({ errors: [], security: [[key, tenant], [key]] })
        .openapi(declaration('/keyed'), ok);
      const root = new OpenApiHono()
        .guardFolder('/folder', { errors: [], security: [[token]] })
        .route('/folder', guarded)
        .route('/', guarded);
      const { paths, components } = openapiDocument(root.documented);
      expect(paths['/folder/keyed']!.get!.security).toEqual([
        { Key: [], Tenant: [], Token: [] },
        { Key: [], Token: [] },
      ]);
      expect(paths['/folder/open']!.get!.security).toEqual([{ Token: [] }]);
      expect(paths['/keyed']!.get!.security).toEqual([{ Key: [], Tenant: [] }, { Key: [] }]);
      expect(paths['/open']!.get).not.toHaveProperty('security');
      expect(components.securitySchemes).toEqual({ Key: key.scheme, Tenant: tenant.scheme, Token: token.scheme });

      const twin = new OpenApiHono()
        .guard({ errors: [], security: [[header('Key', 'X-Other-Key')]] })
        .openapi(declaration('/twin'), ok);
      expect(() => openapiDocument([...root.documented, ...twin.documented])).toThrow(
        'two security schemes are named "Key"',
      );
    },
  );
});
