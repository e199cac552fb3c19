// The C API (include/dmindex/c.h): sessions, scans and iterators.
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "capi/handles.h"

struct dmindex_pairs_t {
  std::vector<dmindex::KeyValue> pairs;
};

struct dmindex_iterator_t {
  std::shared_ptr<dmindex::capi::SessionState> session;  // declared first: outlives `it`
  std::optional<dmindex::Iterator> it;
  dmindex::Status refused;  // why the last call was refused (a misuse), else OK
};

namespace dmindex::capi {
namespace {

// The session of an open session handle, or why there is none.
Result<Session*> LiveSession(dmindex_session_t* session) {
  DMX_RETURN_IF_ERROR(NotNull(session, "the session"));
  if (session->state->session == nullptr) return Status::InvalidArgument("the session was closed");
  return session->state->session.get();
}

// dmindex_put and dmindex_update: a key and a value from C, written by `write` (Session::Insert
// or Session::Update).
using WriteCall = Status (Session::*)(Slice, Slice);
dmindex_code_t Write(dmindex_session_t* session, const char* key, size_t key_length, const char* value,
                     size_t value_length, dmindex_status_t* status, WriteCall write) {
  return Guard(status, [&] {
    auto s = LiveSession(session);
    if (!s.ok()) return s.status();
    Slice k, v;
    DMX_RETURN_IF_ERROR(BytesOf(key, key_length, "the key", &k));
    DMX_RETURN_IF_ERROR(BytesOf(value, value_length, "the value", &v));
    return ((*s)->*write)(k, v);
  });
}

// Runs `move` (Seek, Next, ...) on the iterator unless the call is refused (a NULL iterator;
// Next when not valid); keeps why it was refused, or the exception it raised, for status().
template <typename MoveFn>
void Move(dmindex_iterator_t* iterator, bool must_be_valid, const char* what, MoveFn&& move) noexcept {
  if (iterator == nullptr) return;
  try {
    iterator->refused = Status::Ok();
    if (must_be_valid && !iterator->it->Valid())
      iterator->refused = Status::InvalidArgument(std::string(what) + " on an iterator not positioned at a pair");
    else
      iterator->refused = move(*iterator->it);
  } catch (const std::exception& e) {
    iterator->refused = Status::FromCode(Status::Code::kCorruption, {});  // no allocation
    try {
      iterator->refused = Status::Corruption(std::string("internal error in ") + what + ": " + e.what());
    } catch (...) {
    }
  } catch (...) {
    iterator->refused = Status::FromCode(Status::Code::kCorruption, {});
  }
}

}  // namespace
}  // namespace dmindex::capi

using dmindex::Slice;
using dmindex::Status;
using dmindex::capi::BytesOf;
using dmindex::capi::CopyOut;
using dmindex::capi::Guard;
using dmindex::capi::LiveSession;
using dmindex::capi::NotNull;

extern "C" {

dmindex_code_t dmindex_session_open(dmindex_index_t* index, uint32_t compute_node, dmindex_session_t** session,
                                    dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(session, "the session output pointer"));
    *session = nullptr;
    DMX_RETURN_IF_ERROR(NotNull(index, "the index"));
    if (index->state->closed.load()) return Status::InvalidArgument("the index was closed");
    auto opened = index->state->index->OpenSession(compute_node);
    if (!opened.ok()) return opened.status();
    auto state = std::make_shared<dmindex::capi::SessionState>();
    state->index = index->state;
    state->session = std::move(opened).value();
    *session = new dmindex_session_t{std::move(state)};
    return Status::Ok();
  });
}

dmindex_code_t dmindex_session_close(dmindex_session_t* session, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(session, "the session"));
    if (session->state->iterators != 0)
      return Status::InvalidArgument(std::to_string(session->state->iterators) +
                                     " iterator(s) of the session still exist: destroy them first");
    session->state->session.reset();
    return Status::Ok();
  });
}

void dmindex_session_destroy(dmindex_session_t* session) { delete session; }

dmindex_code_t dmindex_get(dmindex_session_t* session, const char* key, size_t key_length, char** value,
                           size_t* value_length, dmindex_status_t* status) {
  return Guard(status, [&] {
    auto s = LiveSession(session);
    if (!s.ok()) return s.status();
    DMX_RETURN_IF_ERROR(NotNull(value, "the value output pointer"));
    DMX_RETURN_IF_ERROR(NotNull(value_length, "the value length output pointer"));
    *value = nullptr;
    *value_length = 0;
    Slice k;
    DMX_RETURN_IF_ERROR(BytesOf(key, key_length, "the key", &k));
    std::string found;
    DMX_RETURN_IF_ERROR((*s)->Lookup(k, &found));
    DMX_RETURN_IF_ERROR(CopyOut(found, value));
    *value_length = found.size();
    return Status::Ok();
  });
}

dmindex_code_t dmindex_put(dmindex_session_t* session, const char* key, size_t key_length, const char* value,
                           size_t value_length, dmindex_status_t* status) {
  return dmindex::capi::Write(session, key, key_length, value, value_length, status, &dmindex::Session::Insert);
}

dmindex_code_t dmindex_update(dmindex_session_t* session, const char* key, size_t key_length, const char* value,
                              size_t value_length, dmindex_status_t* status) {
  return dmindex::capi::Write(session, key, key_length, value, value_length, status, &dmindex::Session::Update);
}

dmindex_code_t dmindex_delete(dmindex_session_t* session, const char* key, size_t key_length,
                              dmindex_status_t* status) {
  return Guard(status, [&] {
    auto s = LiveSession(session);
    if (!s.ok()) return s.status();
    Slice k;
    DMX_RETURN_IF_ERROR(BytesOf(key, key_length, "the key", &k));
    return (*s)->Delete(k);
  });
}

dmindex_code_t dmindex_compare_and_swap(dmindex_session_t* session, const char* key, size_t key_length,
                                        const char* expected, size_t expected_length, const char* desired,
                                        size_t desired_length, int* swapped, char** current,
                                        size_t* current_length, dmindex_status_t* status) {
  return Guard(status, [&] {
    auto s = LiveSession(session);
    if (!s.ok()) return s.status();
    DMX_RETURN_IF_ERROR(NotNull(swapped, "the swapped output pointer"));
    *swapped = 0;
    if (current != nullptr) {
      DMX_RETURN_IF_ERROR(NotNull(current_length, "the current value's length output pointer"));
      *current = nullptr;
      *current_length = 0;
    }
    Slice k, e, d;
    DMX_RETURN_IF_ERROR(BytesOf(key, key_length, "the key", &k));
    DMX_RETURN_IF_ERROR(BytesOf(expected, expected_length, "the expected value", &e));
    DMX_RETURN_IF_ERROR(BytesOf(desired, desired_length, "the desired value", &d));
    bool done = false;
    std::string found;
    DMX_RETURN_IF_ERROR((*s)->CompareAndSwap(k, e, d, &done, &found));
    *swapped = done ? 1 : 0;
    if (!done && current != nullptr) {
      DMX_RETURN_IF_ERROR(CopyOut(found, current));
      *current_length = found.size();
    }
    return Status::Ok();
  });
}

dmindex_code_t dmindex_delete_range(dmindex_session_t* session, const char* begin, size_t begin_length,
                                    const char* end, size_t end_length, uint64_t* deleted,
                                    dmindex_status_t* status) {
  return Guard(status, [&] {
    auto s = LiveSession(session);
    if (!s.ok()) return s.status();
    Slice b, e;
    DMX_RETURN_IF_ERROR(BytesOf(begin, begin_length, "the range's begin", &b));
    DMX_RETURN_IF_ERROR(BytesOf(end, end_length, "the range's end", &e));
    return (*s)->DeleteRange(b, e, deleted);
  });
}

dmindex_code_t dmindex_write_batch(dmindex_session_t* session, size_t count, const char* const* keys,
                                   const size_t* key_lengths, const char* const* values,
                                   const size_t* value_lengths, size_t* applied, dmindex_status_t* status) {
  return Guard(status, [&] {
    if (applied != nullptr) *applied = 0;
    auto s = LiveSession(session);
    if (!s.ok()) return s.status();
    dmindex::WriteBatch batch;
    if (count != 0) {
      DMX_RETURN_IF_ERROR(NotNull(keys, "the key array"));
      DMX_RETURN_IF_ERROR(NotNull(key_lengths, "the key length array"));
      DMX_RETURN_IF_ERROR(NotNull(values, "the value array"));
      DMX_RETURN_IF_ERROR(NotNull(value_lengths, "the value length array"));
    }
    for (size_t i = 0; i < count; ++i) {
      Slice k, v;
      DMX_RETURN_IF_ERROR(BytesOf(keys[i], key_lengths[i], "a key", &k));
      if (values[i] == nullptr) {
        batch.Delete(k);
        continue;
      }
      DMX_RETURN_IF_ERROR(BytesOf(values[i], value_lengths[i], "a value", &v));
      batch.Put(k, v);
    }
    return (*s)->Write(batch, applied);
  });
}

dmindex_code_t dmindex_scan(dmindex_session_t* session, const char* start, size_t start_length, size_t count,
                            dmindex_pairs_t** pairs, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(pairs, "the pairs output pointer"));
    *pairs = nullptr;
    auto s = LiveSession(session);
    if (!s.ok()) return s.status();
    Slice from;
    DMX_RETURN_IF_ERROR(BytesOf(start, start_length, "the start", &from));
    auto out = std::make_unique<dmindex_pairs_t>();
    const Status scanned = (*s)->Scan(from, count, &out->pairs);
    // NotOwner comes with the pairs before the foreign partition: hand them over too.
    if (scanned.ok() || scanned.IsNotOwner()) *pairs = out.release();
    return scanned;
  });
}

dmindex_code_t dmindex_multi_get(dmindex_session_t* session, size_t count, const char* const* keys,
                                 const size_t* key_lengths, char** values, size_t* value_lengths,
                                 dmindex_code_t* codes, dmindex_status_t* status) {
  return Guard(status, [&] {
    auto s = LiveSession(session);
    if (!s.ok()) return s.status();
    if (count == 0) return Status::Ok();
    for (const void* p : {static_cast<const void*>(keys), static_cast<const void*>(key_lengths),
                          static_cast<const void*>(values), static_cast<const void*>(value_lengths),
                          static_cast<const void*>(codes)})
      DMX_RETURN_IF_ERROR(NotNull(p, "an array of dmindex_multi_get"));
    std::vector<Slice> slices(count);
    for (size_t i = 0; i < count; ++i) DMX_RETURN_IF_ERROR(BytesOf(keys[i], key_lengths[i], "a key", &slices[i]));
    std::vector<std::string> found;
    const std::vector<Status> statuses = (*s)->MultiGet(std::span<const Slice>(slices), &found);
    Status copied;
    for (size_t i = 0; i < count; ++i) {
      codes[i] = static_cast<dmindex_code_t>(statuses[i].code());
      values[i] = nullptr;
      value_lengths[i] = 0;
      if (!statuses[i].ok()) continue;
      values[i] = dmindex::capi::MallocCopy(found[i]);
      if (values[i] == nullptr) {
        codes[i] = DMINDEX_OUT_OF_SPACE;
        copied = Status::OutOfSpace("out of memory copying the values of dmindex_multi_get");
        continue;
      }
      value_lengths[i] = found[i].size();
    }
    return copied;
  });
}

// --- Scan results ---

size_t dmindex_pairs_count(const dmindex_pairs_t* pairs) { return pairs == nullptr ? 0 : pairs->pairs.size(); }

const char* dmindex_pairs_key(const dmindex_pairs_t* pairs, size_t i, size_t* length) {
  const bool there = pairs != nullptr && i < pairs->pairs.size();
  if (length != nullptr) *length = there ? pairs->pairs[i].key.size() : 0;
  return there ? pairs->pairs[i].key.data() : nullptr;
}

const char* dmindex_pairs_value(const dmindex_pairs_t* pairs, size_t i, size_t* length) {
  const bool there = pairs != nullptr && i < pairs->pairs.size();
  if (length != nullptr) *length = there ? pairs->pairs[i].value.size() : 0;
  return there ? pairs->pairs[i].value.data() : nullptr;
}

void dmindex_pairs_destroy(dmindex_pairs_t* pairs) { delete pairs; }

// --- Iterators ---

dmindex_code_t dmindex_iterator_create(dmindex_session_t* session, const char* upper_bound,
                                       size_t upper_bound_length, size_t readahead, dmindex_iterator_t** iterator,
                                       dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(iterator, "the iterator output pointer"));
    *iterator = nullptr;
    auto s = LiveSession(session);
    if (!s.ok()) return s.status();
    dmindex::ReadOptions ro;
    ro.readahead = readahead;
    if (upper_bound != nullptr) ro.upper_bound = std::string(upper_bound, upper_bound_length);
    auto handle = std::make_unique<dmindex_iterator_t>();
    handle->session = session->state;
    handle->it.emplace((*s)->NewIterator(ro));
    ++session->state->iterators;
    *iterator = handle.release();
    return Status::Ok();
  });
}

dmindex_code_t dmindex_iterator_create_bounded(dmindex_session_t* session, const char* lower_bound,
                                               size_t lower_bound_length, const char* upper_bound,
                                               size_t upper_bound_length, uint32_t prefix_bytes, size_t readahead,
                                               dmindex_iterator_t** iterator, dmindex_status_t* status) {
  dmindex_code_t code = dmindex_iterator_create(session, upper_bound, upper_bound_length, readahead, iterator, status);
  if (code != DMINDEX_OK) return code;
  return Guard(status, [&] {
    dmindex::ReadOptions ro;
    ro.readahead = readahead;
    if (lower_bound != nullptr) ro.lower_bound = std::string(lower_bound, lower_bound_length);
    if (upper_bound != nullptr) ro.upper_bound = std::string(upper_bound, upper_bound_length);
    ro.prefix_bytes = prefix_bytes;
    (*iterator)->it.emplace(session->state->session->NewIterator(ro));
    return Status::Ok();
  });
}

void dmindex_iterator_destroy(dmindex_iterator_t* iterator) {
  if (iterator == nullptr) return;
  --iterator->session->iterators;
  delete iterator;
}

void dmindex_iterator_seek(dmindex_iterator_t* iterator, const char* target, size_t target_length) {
  dmindex::capi::Move(iterator, false, "Seek", [&](dmindex::Iterator& it) {
    Slice t;
    DMX_RETURN_IF_ERROR(BytesOf(target, target_length, "the seek target", &t));
    it.Seek(t);
    return Status::Ok();
  });
}

void dmindex_iterator_seek_to_first(dmindex_iterator_t* iterator) {
  dmindex::capi::Move(iterator, false, "SeekToFirst", [](dmindex::Iterator& it) {
    it.SeekToFirst();
    return Status::Ok();
  });
}

void dmindex_iterator_next(dmindex_iterator_t* iterator) {
  dmindex::capi::Move(iterator, true, "Next", [](dmindex::Iterator& it) {
    it.Next();
    return Status::Ok();
  });
}

int dmindex_iterator_valid(const dmindex_iterator_t* iterator) {
  return iterator != nullptr && iterator->refused.ok() && iterator->it->Valid() ? 1 : 0;
}

const char* dmindex_iterator_key(const dmindex_iterator_t* iterator, size_t* length) {
  const bool valid = dmindex_iterator_valid(iterator) != 0;
  if (length != nullptr) *length = valid ? iterator->it->key().size() : 0;
  return valid ? iterator->it->key().data() : nullptr;
}

const char* dmindex_iterator_value(const dmindex_iterator_t* iterator, size_t* length) {
  const bool valid = dmindex_iterator_valid(iterator) != 0;
  if (length != nullptr) *length = valid ? iterator->it->value().size() : 0;
  return valid ? iterator->it->value().data() : nullptr;
}

dmindex_code_t dmindex_iterator_status(const dmindex_iterator_t* iterator, dmindex_status_t* status) {
  return Guard(status, [&] {
    DMX_RETURN_IF_ERROR(NotNull(iterator, "the iterator"));
    return iterator->refused.ok() ? iterator->it->status() : iterator->refused;
  });
}

}  // extern "C"

void dmindex_iterator_seek_for_prev(dmindex_iterator_t* iterator, const char* target, size_t target_length) {
  dmindex::capi::Move(iterator, false, "SeekForPrev", [&](dmindex::Iterator& it) {
    Slice t;
    DMX_RETURN_IF_ERROR(BytesOf(target, target_length, "the seek target", &t));
    it.SeekForPrev(t);
    return Status::Ok();
  });
}

void dmindex_iterator_seek_to_last(dmindex_iterator_t* iterator) {
  dmindex::capi::Move(iterator, false, "SeekToLast", [](dmindex::Iterator& it) {
    it.SeekToLast();
    return Status::Ok();
  });
}

void dmindex_iterator_prev(dmindex_iterator_t* iterator) {
  dmindex::capi::Move(iterator, true, "Prev", [](dmindex::Iterator& it) {
    it.Prev();
    return Status::Ok();
  });
}
