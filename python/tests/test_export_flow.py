"""An export from Python: a destination and an export made over the service API, run on the emulator clock, its
Parquet files read with boto3 (the plugin's objstore fixture)."""

from __future__ import annotations

import io
import struct
from typing import Any

import localplane
from public_api import ACME, call, create_export

try:
    import pyarrow.parquet as parquet
except ImportError:  # optional: without it the files' framing and the SQL row count are checked
    parquet = None


def test_an_export_writes_parquet_that_boto3_reads(instance: localplane.Localplane, objstore: Any) -> None:
    instance.config.patch(export_rows_per_file=200)  # a few files, not one
    export = create_export(instance.api_url, "pytest-flow")
    assert export["status"] == "Created"
    assert call(instance.api_url, "GET", f"/api/v1/bulk-exports/{export['id']}/runs", headers=ACME)[1][0]["status"] == (
        "Created"  # the frozen clock holds it until the test moves the clock
    )

    ran = instance.clock.run_until_idle()
    assert any(task.get("bulk_export_id") == export["id"] for task in ran["ran"])
    _, runs = call(instance.api_url, "GET", f"/api/v1/bulk-exports/{export['id']}/runs", headers=ACME)
    assert [run["status"] for run in runs] == ["Completed"]
    rows_written = runs[0]["metadata"]["result"]["rows_written"]
    assert rows_written > 400

    s3 = objstore  # the plugin's boto3 client of the instance
    listed = s3.list_objects_v2(Bucket="exports", Prefix=f"pytest-flow/export_id={export['id']}/")
    keys = sorted(item["Key"] for item in listed.get("Contents", []) if item["Key"].endswith(".parquet"))
    assert len(keys) == -(-rows_written // 200)
    assert [f"exports/{key}" for key in keys] == sorted(runs[0]["metadata"]["result"]["exported_files"])

    bodies = [s3.get_object(Bucket="exports", Key=key)["Body"].read() for key in keys]
    for body in bodies:
        assert body[:4] == b"PAR1" and body[-4:] == b"PAR1"
        (footer_length,) = struct.unpack("<i", body[-8:-4])
        assert 0 < footer_length < len(body) - 12

    counted = instance.sql("select count(*) from runs", export_id=export["id"])
    assert int(counted["rows"][0][0]) == rows_written
    if parquet is not None:
        assert sum(parquet.read_table(io.BytesIO(body)).num_rows for body in bodies) == rows_written
