"""dmindex.bench_frame: the JSON of `dmindex bench` as a pandas DataFrame in one call."""

import json
import os
import subprocess

import pytest

import dmindex

DMINDEX = os.environ.get("DMINDEX_BIN")  # the dmindex command (ctest sets it)


@pytest.fixture(scope="module")
def bench_json(tmp_path_factory):
    if not DMINDEX:
        pytest.skip("DMINDEX_BIN (the dmindex command) not set: ctest sets it")
    path = tmp_path_factory.mktemp("bench") / "out.json"
    subprocess.run([DMINDEX, "bench", "--design", "local,sherman", "--workload", "ycsb-c,ycsb-a",
                    "--keys", "2000", "--ops", "2000", "--warmup-ops", "200", "--json", str(path)],
                   check=True, stdout=subprocess.DEVNULL)
    return path


def test_bench_frame_has_a_row_per_run_and_every_field(bench_json):
    pandas = pytest.importorskip("pandas")
    frame = dmindex.bench_frame(bench_json)
    assert isinstance(frame, pandas.DataFrame)
    records = json.loads(bench_json.read_text())
    assert len(frame) == len(records) == 4
    assert list(frame["design"]) == ["local", "local", "sherman", "sherman"]
    # Every field is a column, or (a dict: properties, repartition) columns "field.name".
    for field, value in records[0].items():
        if isinstance(value, dict):
            assert all(f"{field}.{name}" in frame.columns for name in value), field
        else:
            assert field in frame.columns, field
    sherman_c = frame[(frame.design == "sherman") & (frame.workload == "ycsb-c")].iloc[0]
    # One leaf READ per lookup, plus the process's lease renewals (a CAS and an 8-byte WRITE
    # every 500 ms, docs/SYNCHRONIZATION.md "Leases"), which the run's verb counts include.
    assert sherman_c["round_trips_per_op"] == pytest.approx(1.0, abs=0.01)
    assert sherman_c["bytes_per_op"] == pytest.approx(1024.0, abs=10)
    assert (frame["throughput_ops"] > 0).all()


def test_bench_records_without_pandas(bench_json, tmp_path):
    records = dmindex.bench_records(bench_json)
    assert [r["workload"] for r in records] == ["ycsb-c", "ycsb-a", "ycsb-c", "ycsb-a"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"design": "x"}')
    with pytest.raises(ValueError, match="not a dmindex bench JSON"):
        dmindex.bench_records(bad)
