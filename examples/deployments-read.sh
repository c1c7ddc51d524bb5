#!/usr/bin/env bash
# Reading the deployment family: E5 (OAuth providers), E6 (codehost repositories), E8 (deployments).
# Usage: LOCALPLANE_URL=http://127.0.0.1:9400 examples/deployments-read.sh
source "$(dirname "$0")/lib.sh"

step "E5: the workspace's OAuth providers (a bare array), then one by its provider_id"
api GET /v2/auth/providers | check 'a list of providers, crm-mcp among them' "Array.isArray(it) && it.some((provider) => provider.provider_id === 'crm-mcp')"
api GET /v2/auth/providers/crm-mcp | check 'crm-mcp is an MCP provider with a dynamic client' "it.provider_type === 'mcp' && it.is_dynamic_client === true"

step 'Codehost integrations, then E6: the repositories of one'
integrations=$(api GET /v1/integrations/forge/codehost/install)
echo "$integrations"
INTEGRATION_ID=$(echo "$integrations" | json 'it[0].id')
repos=$(api GET "/v1/integrations/forge/codehost/$INTEGRATION_ID/repos")
echo "$repos"
echo "$repos" | check 'repositories of that integration' "it.length > 0 && it.every((repo) => repo.host_integration_id === '$INTEGRATION_ID' && repo.url && repo.default_branch)"

step 'E8: list deployments, newest first, filtered; pass the returned offset back for the next page'
page=$(api GET '/v2/deployments?limit=2&name_contains=bot&deployment_type=dev')
echo "$page" | json 'it.resources.map((deployment) => `${deployment.name} ${deployment.status}`).join("\n")'
echo "$page" | check 'a full first page of dev deployments named *bot*' "it.resources.length === 2 && it.resources.every((d) => d.name.includes('bot') && d.source_config.deployment_type === 'dev') && it.offset === 2"
next=$(api GET '/v2/deployments?limit=2&name_contains=bot&deployment_type=dev&offset=2')
echo "$next" | json 'it.resources.map((deployment) => `${deployment.name} ${deployment.status}`).join("\n")'
echo "$next" | check 'the next page goes on where the first ended' "it.resources.length > 0 && it.resources.every((d) => d.name.includes('bot'))"
DEPLOYMENT_ID=$(echo "$page" | json 'it.resources[0].id')

step 'One deployment, its revisions (newest first, filtered by status) and one revision'
api GET "/v2/deployments/$DEPLOYMENT_ID" | check 'the deployment by its id' "it.id === '$DEPLOYMENT_ID'"
revisions=$(api GET "/v2/deployments/$DEPLOYMENT_ID/revisions?status=DEPLOYED,BUILD_FAILED")
echo "$revisions" | json 'it.resources.map((revision) => `${revision.id} ${revision.status}`).join("\n")'
echo "$revisions" | check 'only DEPLOYED or BUILD_FAILED revisions' "it.resources.length > 0 && it.resources.every((r) => ['DEPLOYED', 'BUILD_FAILED'].includes(r.status))"
REVISION_ID=$(echo "$revisions" | json 'it.resources[0].id')
api GET "/v2/deployments/$DEPLOYMENT_ID/revisions/$REVISION_ID" | check 'one revision by its id' "it.id === '$REVISION_ID'"

step 'Errors have the real service shape'
expect_status 404 GET /v2/deployments/00000000-0000-4000-8000-000000000000
expect_status 422 GET /v2/deployments/not-a-uuid
expect_status 422 GET '/v2/deployments?limit=500'
