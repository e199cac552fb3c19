"""The session's operations, iterators and errors, as docs/PYTHON.md describes them."""

import threading

import pytest

import dmindex


def test_point_operations(session):
    session.put(b"user42", b"hello")
    session.insert("user43", "str is UTF-8")  # insert is put: an upsert, as C++ Insert
    assert session.get(b"user42") == b"hello"
    assert session.get("user43") == b"str is UTF-8"
    assert session.get(b"absent") is None
    session.update(b"user42", b"again")
    assert session.get(bytearray(b"user42")) == b"again"
    session.delete(b"user42")
    assert session.get(b"user42") is None
    assert session.multi_get([b"user43", b"user42", b"absent"]) == [b"str is UTF-8", None, None]


def test_not_found_carries_the_status(session):
    with pytest.raises(dmindex.NotFound) as e:
        session.update(b"absent", b"v")
    assert e.value.code == dmindex.Code.NOT_FOUND
    assert isinstance(e.value, KeyError) and isinstance(e.value, dmindex.Error)
    with pytest.raises(KeyError):
        session.delete(b"absent")


def test_bad_keys_and_values_raise_and_change_nothing(session):
    with pytest.raises(dmindex.InvalidArgument) as e:
        session.put(b"", b"v")
    assert e.value.code == dmindex.Code.INVALID_ARGUMENT and "key" in e.value.message
    with pytest.raises(dmindex.InvalidArgument):
        session.put(b"k" * 256, b"v")  # max_key_bytes 255
    with pytest.raises(TypeError):
        session.put(3.5, b"v")
    with pytest.raises(TypeError):
        session.put(b"k", 7)  # values are bytes or str, not ints
    assert session.scan(b"", 10) == []


def test_iterators_seek_and_upper_bound(index, session):
    pairs = [(b"k%03d" % i, b"v%d" % i) for i in range(300)]
    for k, v in pairs:
        session.put(k, v)
    assert list(session.iterator()) == pairs
    assert list(session.iterator(start=b"k100", upper_bound=b"k110")) == pairs[100:110]
    it = session.iterator(readahead=64)
    it.seek(b"k0995")  # not a key: the first one after it
    assert next(it) == pairs[100]
    it.seek(b"k050")
    assert [k for k, _ in zip(it, range(3))] == [pairs[50], pairs[51], pairs[52]]
    it.seek_to_first()
    assert next(it) == pairs[0]
    assert session.scan(b"k298", 10) == pairs[298:]
    with session.iterator(start=b"k299") as last:
        assert list(last) == [pairs[299]]
    with pytest.raises(dmindex.InvalidArgument):
        next(last)  # closed by its with block


def test_u64_format_takes_integer_keys():
    with dmindex.open_index(design="dex", key_format="u64") as idx, idx.session() as s:
        assert idx.options["key_format"] == "u64"
        for k in range(1, 101):
            s.put(k, k.to_bytes(8, "big"))
        assert s.get(7) == (7).to_bytes(8, "big")
        assert [int.from_bytes(k, "big") for k, _ in s.iterator(start=10, upper_bound=13)] == [10, 11, 12]
        with pytest.raises(dmindex.InvalidArgument):
            s.put(b"abc", b"v")  # not 8 bytes
        with pytest.raises(dmindex.InvalidArgument):
            s.put(-1, b"v")


def test_threads_each_with_a_session(index):
    """Operations release the GIL; each thread has its own session (sessions are not
    thread-safe, the index is)."""
    errors = []

    def work(t):
        try:
            with index.session() as s:
                for i in range(200):
                    s.put(b"t%d-%04d" % (t, i), b"%d" % i)
        except Exception as e:  # reported below, not lost in the thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with index.session() as s:
        assert len(list(s.iterator())) == 800
        assert s.get(b"t3-0199") == b"199"


def test_ordered_store_operations(session):
    for i in range(0, 100, 10):
        session.put(b"k%03d" % i, b"v%d" % i)
    session.put(b"other", b"x")
    # Backwards from a target (SeekForPrev, then Prev), and from the end.
    back = [k for k, _ in session.iterator(start=b"k055", reverse=True)]
    assert back == [b"k050", b"k040", b"k030", b"k020", b"k010", b"k000"]
    assert [k for k, _ in session.iterator(reverse=True)][0] == b"other"
    # Bounds and prefix mode.
    assert [k for k, _ in session.iterator(lower_bound=b"k030", upper_bound=b"k060", reverse=True)] == [
        b"k050", b"k040", b"k030"]
    assert len(list(session.iterator(start=b"k", prefix_bytes=1))) == 10
    # CompareAndSwap.
    assert session.compare_and_swap(b"k010", b"wrong", b"new") == (False, b"v10")
    assert session.compare_and_swap(b"k010", b"v10", b"new") == (True, None)
    assert session.get(b"k010") == b"new"
    with pytest.raises(dmindex.NotFound):
        session.compare_and_swap(b"absent", b"a", b"b")
    # DeleteRange and a write batch.
    assert session.delete_range(b"k020", b"k050") == 3
    assert session.get(b"k020") is None and session.get(b"k050") == b"v50"
    session.write([(b"b1", b"1"), (b"k000", None), (b"b2", b"2")])
    assert session.get(b"b1") == b"1" and session.get(b"k000") is None
    with pytest.raises(dmindex.InvalidArgument):
        session.write([(b"b3", b"3"), (b"", b"empty key")])
    assert session.get(b"b3") is None


def test_options_from_a_string():
    with dmindex.open_index(options="design=local;max_key_bytes=16") as index:
        assert index.design == "local"
        assert index.options["max_key_bytes"] == 16
    with pytest.raises(dmindex.InvalidArgument):
        dmindex.open_index(options="node_bytes=lots")
