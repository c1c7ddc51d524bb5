#!/usr/bin/env bash
# The hosted CLI's deploy flow (a remote build): create, upload-url and the tarball PUT to it,
# a revision of that tarball polled to DEPLOYED on the emulator clock with its build log
# streamed, the deploy log, then a deletion that waits in AWAITING_DELETE.
# Usage: LOCALPLANE_URL=http://127.0.0.1:9400 examples/deployments-deploy.sh
source "$(dirname "$0")/lib.sh"
NAME="example-deploy-$(date +%s)-$$"
WORK=$(mktemp -d)
trap 'restore_clock; rm -rf "$WORK"; admin PATCH /config "{\"deployment_deletion_seconds\": 0}" > /dev/null' EXIT

step 'Freeze the emulator clock: revisions move only when the script advances it'
admin POST /clock/freeze | check 'the clock is frozen' 'it.frozen === true'

step 'The CLI looks the name up, finds nothing, and creates an internal_source deployment'
api GET "/v2/deployments?name_contains=$NAME" | check 'no deployment of that name yet' 'it.resources.length === 0'
DEPLOYMENT_ID=$(api POST /v2/deployments '{"name": "'"$NAME"'", "source": "internal_source", "source_config": {"deployment_type": "dev"}, "source_revision_config": {}, "secrets": []}' | json 'it.id')
admin POST /clock/advance '{"seconds": 10}' > /dev/null

step 'upload-url, then the tarball PUT to the presigned URL (into the embedded objstore)'
mkdir -p "$WORK/src" && echo '{"graphs": {"agent": "./agent.py:graph"}}' > "$WORK/src/graph.json"
tar -czf "$WORK/source.tgz" -C "$WORK/src" graph.json
upload=$(api POST "/v2/deployments/$DEPLOYMENT_ID/upload-url")
OBJECT_PATH=$(echo "$upload" | json 'it.object_path')
curl --fail-with-body -sS -X PUT -H 'Content-Type: application/gzip' --data-binary "@$WORK/source.tgz" "$(echo "$upload" | json 'it.upload_url')"
echo "ok: uploaded $OBJECT_PATH"

step 'A revision of that tarball, polled once a (frozen) second, its build log streamed with next_offset'
REVISION_ID=$(api POST "/v2/deployments/$DEPLOYMENT_ID/revisions" '{"revision_source": "internal_source", "source_revision_config": {"source_tarball_path": "'"$OBJECT_PATH"'", "graph_config_path": "graph.json"}}' | json 'it.id')
OFFSET=null
for second in $(seq 0 30); do
  status=$(api GET "/v2/deployments/$DEPLOYMENT_ID/revisions/$REVISION_ID" | json 'it.status')
  page=$(api POST "/v1/projects/$DEPLOYMENT_ID/revisions/$REVISION_ID/build_logs" '{"order": "asc", "limit": 50, "offset": '"$OFFSET"'}')
  echo "$page" | json 'it.logs.map((entry) => "  | " + entry.message).join("\n")' | grep -v '^$' || true
  OFFSET=$(echo "$page" | json 'JSON.stringify(it.next_offset)')
  case $status in DEPLOYED | CREATE_FAILED | BUILD_FAILED | DEPLOY_FAILED | SKIPPED) break ;; esac
  admin POST /clock/advance '{"seconds": 1}' > /dev/null
done
echo "final status: $status"
api GET "/v2/deployments/$DEPLOYMENT_ID" | check 'the revision is active' "it.active_revision_id === '$REVISION_ID'"
api POST "/v1/projects/$DEPLOYMENT_ID/revisions/$REVISION_ID/deploy_logs" '{"order": "desc", "limit": 1}' | check 'the deploy log ends with the server live' "it.logs[0].message.endsWith('is live.')"
expect_status 400 POST "/v2/deployments/$DEPLOYMENT_ID/revisions" '{"source_revision_config": {"source_tarball_path": "never/uploaded.tar.gz"}}'

step 'Deletion as the hosted service does it: AWAITING_DELETE for 60 s, then gone'
admin PATCH /config '{"deployment_deletion_seconds": 60}' > /dev/null
expect_status 204 DELETE "/v2/deployments/$DEPLOYMENT_ID"
api GET "/v2/deployments/$DEPLOYMENT_ID" | check 'AWAITING_DELETE' "it.status === 'AWAITING_DELETE'"
expect_status 409 PATCH "/v2/deployments/$DEPLOYMENT_ID" '{"source_config": {"build_on_push": false}}'
admin POST /clock/advance '{"seconds": 60}' > /dev/null
expect_status 404 GET "/v2/deployments/$DEPLOYMENT_ID"
