"""The results of `dmindex bench --json FILE` in Python: one record (dict) per design x
workload run, with every field of the JSON (docs/BENCHMARKS.md, "Columns and JSON fields")."""

import json


def bench_records(path):
    """The records of a `dmindex bench --json` file, as a list of dicts."""
    with open(path, encoding="utf-8") as f:
        records = json.load(f)
    if not isinstance(records, list):
        raise ValueError(f"{path}: not a dmindex bench JSON file (an array of records)")
    return records


def bench_frame(path):
    """The records of a `dmindex bench --json` file as a pandas DataFrame, one row per run.

    Nested fields become columns of their own (``repartition.start_s``); the timeline stays a
    list of dicts in its cell. Needs pandas (``pip install dmindex[pandas]``).
    """
    try:
        import pandas
    except ImportError as e:
        raise ImportError("dmindex.bench_frame needs pandas (pip install pandas); "
                          "dmindex.bench_records gives the same records as dicts") from e
    return pandas.json_normalize(bench_records(path), max_level=1)
