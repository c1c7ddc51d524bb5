import io

import boto3
from botocore.config import Config

try:
    import pyarrow.parquet as parquet
except ImportError:  # optional: without it the test checks the file's magic bytes alone
    parquet = None

# A seeded workspace on the plus plan (bulk exports), and a fixture key pair of the objstore.
ACME = {"X-API-Key": "lp_test_acme_plus_0001", "X-Tenant-Id": "6e81f035-1834-4208-8f34-e3a9482cde15"}
OBJSTORE_KEY = {"access_key_id": "LPTESTFULLACCESS0001", "secret_access_key": "lp-test-secret-full-access-0001"}


def test_an_export_writes_parquet_that_boto3_reads(localplane):
    status, destination = localplane.call(
        "POST",
        "/api/v1/bulk-exports/destinations",
        {"display_name": "landing", "config": {"bucket_name": "exports", "prefix": "pytest"}, "credentials": OBJSTORE_KEY},
        ACME,
    )
    assert status == 200, destination
    status, export = localplane.call(
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
        ACME,
    )
    assert status == 200, export
    # Runs what is due now (the export just created) to its end.
    localplane.call("POST", "/_localplane/clock/advance", {"seconds": 0})
    _, runs = localplane.call("GET", f"/api/v1/bulk-exports/{export['id']}/runs", headers=ACME)
    assert [run["status"] for run in runs] == ["Completed"]

    s3 = boto3.client(
        "s3",
        endpoint_url=localplane.objstore_url,
        aws_access_key_id=OBJSTORE_KEY["access_key_id"],
        aws_secret_access_key=OBJSTORE_KEY["secret_access_key"],
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}),
    )
    listed = s3.list_objects_v2(Bucket="exports", Prefix=f"pytest/export_id={export['id']}/")
    parquet_keys = [item["Key"] for item in listed.get("Contents", []) if item["Key"].endswith(".parquet")]
    assert parquet_keys
    body = s3.get_object(Bucket="exports", Key=parquet_keys[0])["Body"].read()
    assert body[:4] == b"PAR1"
    if parquet is not None:
        assert parquet.read_table(io.BytesIO(body)).num_rows > 0


def test_each_test_starts_from_the_seed(localplane):
    # The destination the test before created is gone: the autouse fixture reset the instance.
    assert localplane.call("GET", "/api/v1/bulk-exports/destinations", headers=ACME) == (200, [])
