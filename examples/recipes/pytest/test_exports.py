"""The pytest-localplane plugin at work: `localplane`, the session's instance (reset before each test that uses it),
and `objstore`, a boto3 S3 client of its objstore. Installed (`pip install ./python`), the plugin loads itself; no
conftest.py is needed.

The requests to the API stand in for the code under test (an SDK, a deploy CLI): here, urllib.
"""

import io
import json
import urllib.request

import pytest

try:
    import pyarrow.parquet as parquet
except ImportError:  # optional: without it the test checks the file's magic bytes alone
    parquet = None

# A seeded workspace on the plus plan (bulk exports), and a fixture key pair of the objstore.
ACME = {"X-API-Key": "lp_test_acme_plus_0001", "X-Tenant-Id": "6e81f035-1834-4208-8f34-e3a9482cde15"}
OBJSTORE_KEY = {"access_key_id": "LPTESTFULLACCESS0001", "secret_access_key": "lp-test-secret-full-access-0001"}


def call_api(localplane, method, path, body=None):
    """A JSON request to the API as the ACME workspace; returns its parsed body (an HTTP error raises)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(localplane.api_url + path, data=data, method=method, headers=ACME)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


# Frozen clock: the export runs when the test says, not before.
@pytest.mark.localplane(freeze_clock=True)
def test_an_export_writes_parquet_that_boto3_reads(localplane, objstore):
    destination = call_api(
        localplane,
        "POST",
        "/api/v1/bulk-exports/destinations",
        {
            "display_name": "landing",
            "config": {"bucket_name": "exports", "prefix": "pytest"},
            "credentials": OBJSTORE_KEY,
        },
    )
    export = call_api(
        localplane,
        "POST",
        "/api/v1/bulk-exports",
        {
            "bulk_export_destination_id": destination["id"],
            "session_id": "b473474a-d1dd-4781-b84d-264ef5770f98",  # support-bot-staging: 1,500 runs
            "start_time": "2026-10-01T00:00:00Z",
            "end_time": "2026-10-02T00:00:00Z",
            "format_version": "v2_beta",
            "compression": "snappy",
        },
    )
    # Runs the export, and whatever it schedules, to its end.
    localplane.clock.run_until_idle()
    runs = call_api(localplane, "GET", f"/api/v1/bulk-exports/{export['id']}/runs")
    assert [run["status"] for run in runs] == ["Completed"]

    listed = objstore.list_objects_v2(Bucket="exports", Prefix=f"pytest/export_id={export['id']}/")
    parquet_keys = [item["Key"] for item in listed.get("Contents", []) if item["Key"].endswith(".parquet")]
    assert parquet_keys
    body = objstore.get_object(Bucket="exports", Key=parquet_keys[0])["Body"].read()
    assert body[:4] == b"PAR1"
    if parquet is not None:
        assert parquet.read_table(io.BytesIO(body)).num_rows > 0


def test_each_test_starts_from_the_seed(localplane):
    # The destination the test before created is gone: the fixture reset the instance.
    assert call_api(localplane, "GET", "/api/v1/bulk-exports/destinations") == []
    # And the journal holds this test's requests alone.
    assert localplane.requests.count(source="api") == 1
