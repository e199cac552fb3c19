#include "tree/value_store.h"

#include <vector>

namespace dmindex::tree {

template <KeyValueTraits KV>
Result<ValueBlockRef> ValueStore<KV>::Prepare(Ctx& c, KeyRef key, ValueRef value, uint16_t node,
                                              fabric::Verb* write) const {
  return PrepareInto(c, key, value, node, &c.value_buf, write);
}

template <KeyValueTraits KV>
Result<ValueBlockRef> ValueStore<KV>::PrepareInto(Ctx& c, KeyRef key, ValueRef value, uint16_t node,
                                                  std::vector<std::byte>* buf, fabric::Verb* write) const {
  const uint64_t bytes = value_block::kHeaderBytes + value.size();
  const uint32_t block_bytes = value_block::ClassBytes(value_block::ClassFor(bytes));
  c.cn.retired.Reclaim(c.cn.allocator);  // blocks past their grace period first
  auto addr = c.cn.allocator.AllocateOn(c.ep, node, block_bytes);
  if (!addr.ok()) return addr.status();
  buf->resize(bytes);
  value_block::Encode(buf->data(), KV::Owner(key), value);
  *write = fabric::Verb::Write(*addr, buf->data(), static_cast<uint32_t>(bytes));
  return t_.validator.leaf().BlockRef(*addr, block_bytes, static_cast<uint32_t>(value.size()));
}

template <KeyValueTraits KV>
void ValueStore<KV>::Free(Ctx& c, const ValueBlockRef& ref) const {
  c.cn.allocator.Free(ref.addr, BlockBytes(ref));
}

template <KeyValueTraits KV>
void ValueStore<KV>::Retire(Ctx& c, const ValueBlockRef& ref) const {
  if (!ref.is_null()) c.cn.retired.Retire(ref.addr, BlockBytes(ref));
}

template <KeyValueTraits KV>
Status ValueStore<KV>::FetchAll(Ctx& c, std::span<Fetch> fetches, runtime::Clock::time_point started,
                                bool* all_ok) const {
  *all_ok = true;
  if (fetches.empty()) return Status::Ok();
  size_t total = 0;
  for (const Fetch& f : fetches) total += f.ref.read_bytes;
  c.fetch_buf.resize(total);
  std::vector<fabric::Verb> reads;
  reads.reserve(fetches.size());
  size_t at = 0;
  for (const Fetch& f : fetches) {
    reads.push_back(fabric::Verb::Read(f.ref.addr, c.fetch_buf.data() + at, f.ref.read_bytes));
    at += f.ref.read_bytes;
  }
  DMX_RETURN_IF_ERROR(c.ep.Post(std::span<fabric::Verb>(reads), fabric::Ordering::kUnordered));
  // Every block was copied by now: accepted only within the lease of the leaf READ.
  const bool in_lease = runtime::Now() - started < t_.options.value_lease;
  at = 0;
  for (Fetch& f : fetches) {
    f.ok = in_lease && value_block::Decode(c.fetch_buf.data() + at, f.ref.read_bytes, f.owner,
                                           f.ref.length(), f.value);
    at += f.ref.read_bytes;
    *all_ok = *all_ok && f.ok;
  }
  return Status::Ok();
}

// Only formats with value blocks.
template class ValueStore<U64BytesKV>;
template class ValueStore<BytesKV>;

}  // namespace dmindex::tree
