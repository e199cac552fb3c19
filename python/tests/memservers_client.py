"""Run by test_memservers.py under scripts/with-memservers.sh, which appends the two memory
servers' addresses and `--cluster-key FILE`: an index on them through Cluster.connect."""

import sys

import dmindex

servers, key_file = sys.argv[1:3], sys.argv[4]
with dmindex.Cluster.connect(servers, transport="shm", cluster_key_file=key_file) as cluster:
    assert cluster.backend == "ucx-shm" and cluster.memory_nodes == 2, (cluster.backend, cluster.memory_nodes)
    with cluster.open_index(design="sherman", name="py", key_format="bytes", node_bytes=4096) as index, \
            index.session() as s:
        for i in range(500):
            s.put(b"user%04d" % i, b"value %d" % i)
        assert s.get(b"user0042") == b"value 42"
        assert [k for k, _ in s.iterator(start=b"user0100", upper_bound=b"user0103")] == \
            [b"user0100", b"user0101", b"user0102"]
    # The index lives on the servers: a second open by name finds what was written.
    with cluster.open_index(design="sherman", name="py", key_format="bytes", node_bytes=4096,
                            create_if_missing=False) as index, index.session() as s:
        assert s.get(b"user0499") == b"value 499"
print("memory servers: ok")
