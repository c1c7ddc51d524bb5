#!/usr/bin/env bash
# The bulk-export family, E1-E4, and cancelling an export.
# Usage: LOCALPLANE_URL=http://127.0.0.1:9400 examples/bulk-export.sh
source "$(dirname "$0")/lib.sh"
SESSION_ID=1078ad85-a02a-4f80-8b3b-f6eb4fe8ab93   # Acme's support-bot-production: 50,000 runs, 2026-10-01 to 10-04

step 'E1: create a destination (validated by a test write under <prefix>/tmp/)'
# endpoint_url left out: the default cloud endpoint is served by the embedded objstore, on whatever port it has.
destination=$(api POST /api/v1/bulk-exports/destinations '{
  "destination_type": "objstore",
  "display_name": "warehouse landing",
  "config": {"bucket_name": "exports", "prefix": "traces"},
  "credentials": {"access_key_id": "LPTESTFULLACCESS0001", "secret_access_key": "lp-test-secret-full-access-0001"}
}')
echo "$destination"
echo "$destination" | check 'the secret is never returned' '!JSON.stringify(it).includes("lp-test-secret") && it.credentials_keys.includes("secret_access_key")'
DESTINATION_ID=$(echo "$destination" | json 'it.id')

step 'E2: rotate the key pair (validated the same way)'
api PATCH "/api/v1/bulk-exports/destinations/$DESTINATION_ID" '{
  "credentials": {"access_key_id": "LPTESTROTATION000004", "secret_access_key": "lp-test-secret-rotation-0004"}
}' | check 'the destination keeps its id' "it.id === '$DESTINATION_ID'"

step 'E3: a one-time export of three days'
created=$(api POST /api/v1/bulk-exports '{
  "bulk_export_destination_id": "'"$DESTINATION_ID"'",
  "session_id": "'"$SESSION_ID"'",
  "start_time": "2026-10-01T00:00:00Z", "end_time": "2026-10-04T00:00:00Z",
  "format_version": "v2_beta", "compression": "snappy"
}')
echo "$created" | check 'a new export starts Created' "it.status === 'Created'"
EXPORT_ID=$(echo "$created" | json 'it.id')
echo "export $EXPORT_ID"
# A recurring export sends "interval_hours": 24 instead of end_time (status IntervalScheduled).

step 'E4: poll until it has ended, then read its runs (one per UTC day)'
for attempt in $(seq 1 240); do
  status_now=$(api GET "/api/v1/bulk-exports/$EXPORT_ID" | json 'it.status')
  case "$status_now" in Created | Running) sleep 0.5 ;; *) break ;; esac
done
echo "status: $status_now"
[ "$status_now" = Completed ] || { echo "FAILED: the export ended $status_now" >&2; exit 1; }
runs=$(api GET "/api/v1/bulk-exports/$EXPORT_ID/runs")
echo "$runs" | json 'it.map((run) => `${run.start_time} ${run.status}: ${run.metadata.result.rows_written} rows in ${run.metadata.result.exported_files.length} files`).join("\n")'
echo "$runs" | check 'three daily runs, each Completed with files' "it.length === 3 && it.every((run) => run.status === 'Completed' && run.metadata.result.exported_files.length > 0)"
first_file=$(echo "$runs" | json 'it[0].metadata.result.exported_files[0]')
echo "first file: $first_file"

step 'Every object is also a plain file: read the Parquet magic bytes in place'
FILES_DIR=$(admin GET /fixtures | json 'it.objstore.files_dir')
node -e '
  const bytes = require("node:fs").readFileSync(process.argv[1]);
  const magic = (at) => bytes.subarray(at, at + 4).toString();
  if (magic(0) !== "PAR1" || magic(bytes.length - 4) !== "PAR1") { console.error("FAILED: not a Parquet file"); process.exit(1); }
  console.log(`ok: ${bytes.length} bytes of Parquet`);' "$FILES_DIR/$first_file"   # exported_files name <bucket>/<key>

step 'Cancel an export (the clock is frozen first, so it cannot finish before the cancel)'
admin POST /clock/freeze > /dev/null
CANCEL_ID=$(api POST /api/v1/bulk-exports '{
  "bulk_export_destination_id": "'"$DESTINATION_ID"'",
  "session_id": "'"$SESSION_ID"'",
  "start_time": "2026-10-01T00:00:00Z", "end_time": "2026-10-02T00:00:00Z",
  "format_version": "v2_beta", "compression": "snappy"
}' | json 'it.id')
api PATCH "/api/v1/bulk-exports/$CANCEL_ID" '{"status": "Cancelled"}' | check 'the export is Cancelled' "it.status === 'Cancelled'"
api GET "/api/v1/bulk-exports/$CANCEL_ID/runs" | check 'and so are its runs' "it.every((run) => run.status === 'Cancelled')"

step 'Delete the destination (204; 409 while an active export uses it)'
api DELETE "/api/v1/bulk-exports/destinations/$DESTINATION_ID"
expect_status 404 GET "/api/v1/bulk-exports/destinations/$DESTINATION_ID"
