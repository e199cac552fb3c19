import pytest

import dmindex


@pytest.fixture
def index():
    """A bytes-format Sherman index on an embedded cluster of its own."""
    with dmindex.open_index(design="sherman", key_format="bytes", node_bytes=4096) as idx:
        yield idx


@pytest.fixture
def session(index):
    with index.session() as s:
        yield s
