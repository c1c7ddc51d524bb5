#!/usr/bin/env bash
# Writing deployments: E9 (create), the revision lifecycle on the emulator clock, E7 (patch),
# redeploy, and DELETE (one, then several at once).
# Usage: LOCALPLANE_URL=http://127.0.0.1:9400 examples/deployments-write.sh
source "$(dirname "$0")/lib.sh"
# Names are unique per workspace (a tracing project of the same name is a 409): one per run of this script.
NAME="example-$(date +%s)-$$"

step 'Freeze the emulator clock: revisions move only when the script advances it'
admin POST /clock/freeze | check 'the clock is frozen' 'it.frozen === true'

step 'E9: create a codehost deployment from the first integration and its first repository'
INTEGRATION_ID=$(api GET /v1/integrations/forge/codehost/install | json 'it[0].id')
repo=$(api GET "/v1/integrations/forge/codehost/$INTEGRATION_ID/repos" | json 'it[0]')
REPO_URL=$(echo "$repo" | json 'it.url')
BRANCH=$(echo "$repo" | json 'it.default_branch')
# codehost_body NAME: the create body of a deployment of that name.
codehost_body() {
  echo '{
    "name": "'"$1"'",
    "source": "codehost",
    "source_config": {"integration_id": "'"$INTEGRATION_ID"'", "repo_url": "'"$REPO_URL"'", "deployment_type": "dev"},
    "source_revision_config": {"repo_ref": "'"$BRANCH"'", "graph_config_path": "graph.json"},
    "secrets": [{"name": "OPENAI_API_KEY", "value": "sk-example-not-a-real-key"}]
  }'
}
deployment=$(api POST /v2/deployments "$(codehost_body "$NAME")")
echo "$deployment" | check 'created AWAITING_DATABASE, with its first revision and no active one' "it.status === 'AWAITING_DATABASE' && it.latest_revision_id && !it.active_revision_id"
echo "$deployment" | check 'secrets are masked' "!JSON.stringify(it).includes('sk-example') && it.secrets.every((secret) => secret.value === '********')"
DEPLOYMENT_ID=$(echo "$deployment" | json 'it.id')
FIRST_REVISION=$(echo "$deployment" | json 'it.latest_revision_id')
expect_status 409 POST /v2/deployments "$(codehost_body "$NAME")"

step 'The revision lifecycle: CREATING -> QUEUED -> AWAITING_BUILD -> BUILDING -> AWAITING_DEPLOY -> DEPLOYING -> DEPLOYED (10 s by default)'
revision() { api GET "/v2/deployments/$DEPLOYMENT_ID/revisions/$1" | json 'it.status'; }
echo "frozen: $(revision "$FIRST_REVISION")"
admin POST /clock/advance '{"seconds": 4}' > /dev/null
echo "after 4 s: $(revision "$FIRST_REVISION")"
admin POST /clock/advance '{"seconds": 6}' > /dev/null
echo "after 10 s: $(revision "$FIRST_REVISION")"
api GET "/v2/deployments/$DEPLOYMENT_ID" | check 'deployed: the revision is active and the deployment READY' "it.active_revision_id === '$FIRST_REVISION' && it.status === 'READY'"

step 'E7: patch the deployment; a new ref makes a new revision'
patched=$(api PATCH "/v2/deployments/$DEPLOYMENT_ID" '{"source_revision_config": {"repo_ref": "refs/heads/release"}}')
echo "$patched" | check 'a second revision, the first still active' "it.latest_revision_id !== '$FIRST_REVISION' && it.active_revision_id === '$FIRST_REVISION'"
SECOND_REVISION=$(echo "$patched" | json 'it.latest_revision_id')
expect_status 400 PATCH "/v2/deployments/$DEPLOYMENT_ID" '{"name": "renamed"}'
admin POST /clock/advance '{"seconds": 10}' > /dev/null
api GET "/v2/deployments/$DEPLOYMENT_ID" | check 'the second revision is active' "it.active_revision_id === '$SECOND_REVISION'"

step 'Redeploy the first revision: a third revision with its source and config'
redeployed=$(api POST "/v2/deployments/$DEPLOYMENT_ID/revisions/$FIRST_REVISION/redeploy")
THIRD_REVISION=$(echo "$redeployed" | json 'it.latest_revision_id')
admin POST /clock/advance '{"seconds": 10}' > /dev/null
api GET "/v2/deployments/$DEPLOYMENT_ID/revisions" | check 'three revisions, newest first, the third active and DEPLOYED' "it.resources.length === 3 && it.resources[0].id === '$THIRD_REVISION' && it.resources[0].status === 'DEPLOYED'"

step 'DELETE one deployment (204, with its tracing project), then several at once'
api DELETE "/v2/deployments/$DEPLOYMENT_ID?delete_tracing_project=true"
expect_status 404 GET "/v2/deployments/$DEPLOYMENT_ID"
ANOTHER_ID=$(api POST /v2/deployments "$(codehost_body "$NAME-b")" | json 'it.id')
# 200 when every one was deleted, 207 when some were not (here an unknown id).
expect_status 207 DELETE "/v2/deployments?deployment_ids=$ANOTHER_ID&deployment_ids=00000000-0000-4000-8000-000000000000"
expect_status 404 GET "/v2/deployments/$ANOTHER_ID"
