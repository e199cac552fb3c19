"""dmindex: a range index (ordered key-value store) for disaggregated memory.

    import dmindex
    with dmindex.open_index(design="sherman", key_format="bytes") as index:
        with index.session() as s:
            s.put(b"user42", b"hello")
            assert s.get(b"user42") == b"hello"

The C++ API (include/dmindex/) for Python; docs/PYTHON.md documents every call.
"""

from ._dmindex import Cluster, Index, Iterator, Session, designs, open_index
from ._errors import (Aborted, Busy, Code, Corruption, Error, InvalidArgument, IoError,
                      NotFound, NotOwner, NotSupported, OutOfSpace, Unavailable)
from .bench import bench_frame, bench_records

__all__ = [
    "Cluster", "Index", "Iterator", "Session", "designs", "open_index",
    "Code", "Error", "NotFound", "InvalidArgument", "Unavailable", "OutOfSpace", "Corruption",
    "IoError", "NotSupported", "Aborted", "NotOwner", "Busy",
    "bench_frame", "bench_records",
]
