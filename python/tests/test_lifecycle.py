"""Opening, closing and misuse: a closed object raises, never crashes."""

import gc

import pytest

import dmindex


def test_close_closes_what_was_opened_from_it():
    idx = dmindex.open_index(design="sherman", key_format="bytes", node_bytes=4096)
    s = idx.session()
    s.put(b"a", b"1")
    it = s.iterator()
    idx.close()  # closes the session and the iterator first, as C++ Close needs
    assert idx.closed and s.closed
    for misuse in (lambda: s.get(b"a"), lambda: s.put(b"a", b"2"), lambda: next(it),
                   lambda: it.seek(b"a"), idx.session, idx.stats, lambda: idx.design):
        with pytest.raises(dmindex.InvalidArgument):
            misuse()
    idx.close()  # a second close is fine, as in C++
    s.close()


def test_objects_outliving_their_parents_in_any_order():
    s = dmindex.open_index(design="naive", key_format="bytes", node_bytes=4096).session()
    it = s.iterator()  # the index object is gone already: the session keeps it open
    gc.collect()
    s.put(b"x", b"y")
    s.put(b"z", b"w")
    assert next(it) == (b"x", b"y")  # positioned at its first next(), after the puts
    del s
    gc.collect()
    assert list(it) == [(b"z", b"w")]  # the iterator keeps its session (and index) alive


def test_options_and_errors_of_open():
    with pytest.raises(dmindex.InvalidArgument) as e:
        dmindex.open_index(design="no-such-design")
    assert "no-such-design" in str(e.value) and str(e.value).startswith("InvalidArgument: ")
    with pytest.raises(dmindex.InvalidArgument, match="unknown option 'nodes'"):
        dmindex.open_index(nodes=3)
    with pytest.raises(dmindex.InvalidArgument, match="key_format"):
        dmindex.open_index(key_format="strings")
    with pytest.raises(dmindex.InvalidArgument):
        dmindex.open_index(design="sherman", knobs={"no-such-knob": "on"})
    with pytest.raises(dmindex.InvalidArgument, match="too small"):
        dmindex.open_index(design="sherman", key_format="bytes", node_bytes=1024)
    assert "sherman" in dmindex.designs() and "dex" in dmindex.designs()


def test_a_cluster_holds_several_indexes_by_name():
    with dmindex.Cluster.embedded(memory_nodes=2) as cluster:
        assert cluster.backend == "inproc" and cluster.memory_nodes == 2
        with cluster.open_index(design="sherman", name="a", key_format="bytes", node_bytes=4096) as a, \
                a.session() as s:
            s.put(b"k", b"in a")
        with cluster.open_index(design="sherman", name="a", key_format="bytes", node_bytes=4096,
                                create_if_missing=False) as again, again.session() as s:
            assert s.get(b"k") == b"in a"  # the same index, opened by name
        with pytest.raises(dmindex.NotFound):
            cluster.open_index(design="sherman", name="b", create_if_missing=False)
        reads = cluster.properties()["dmindex.fabric.reads"]
        assert reads > 0
    with pytest.raises(dmindex.InvalidArgument):
        cluster.open_index()  # closed handle
    with pytest.raises(dmindex.InvalidArgument):
        dmindex.open_index(cluster=cluster)


def test_stats_and_properties_count_exactly(index, session):
    for i in range(100):
        session.put(b"key%03d" % i, b"v")
    before = index.cluster_properties()["dmindex.fabric.round-trips"]
    assert session.get(b"key050") == b"v"
    after = index.cluster_properties()["dmindex.fabric.round-trips"]
    assert after - before == 1  # Sherman: one READ of the leaf, inner nodes cached
    stats = index.stats()
    assert stats["pool_bytes"] > 0
    assert stats["pool_bytes"] == index.properties()["dmindex.pool.bytes"]


def test_unreachable_memory_servers_are_unavailable():
    with pytest.raises(dmindex.Unavailable) as e:
        dmindex.Cluster.connect(["127.0.0.1:1"], connect_timeout_s=0.5)
    assert isinstance(e.value, ConnectionError)


def test_a_refused_drop_leaves_the_index_open_and_a_later_one_frees_it():
    with dmindex.Cluster.embedded(memory_nodes=1) as cluster:
        opts = dict(design="sherman", name="held", key_format="bytes", node_bytes=4096)
        idx = cluster.open_index(**opts)
        with idx.session() as s:
            s.put(b"k", b"v")
        other = cluster.open_index(create_if_missing=False, **opts)
        with pytest.raises(dmindex.Busy):
            idx.drop()
        with pytest.raises(dmindex.Busy):
            idx.drop(force=True)  # the other handle's process (this one) is alive
        assert not idx.closed
        with idx.session() as s:
            assert s.get(b"k") == b"v"  # still open and working
        other.close()
        idx.drop()
        assert idx.closed
        with pytest.raises(dmindex.NotFound):
            cluster.open_index(create_if_missing=False, **opts)
