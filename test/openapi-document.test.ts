import { describe, expect, it } from 'vitest';
import { openapiDocument } from '../src/openapi/document.ts';
import { useLocalplane, workspaceByTier } from './support/instance.ts';
import { expectSchema } from './support/openapi.ts';

describe("localplane's own OpenAPI document", () => {
  const ctx = useLocalplane();

  it('is OpenAPI 3.1 with the component schemas of every response family', () => {
    const document = openapiDocument();
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['BulkExportDestination', 'BulkExport', 'BulkExportRun', 'Deployment', 'DeploymentsList', 'Revision', 'RevisionsList', 'OAuthProviderResponse', 'CodehostIntegration', 'CodehostRepository', 'HTTPValidationError']),
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
});
