#include "designs/dex/offload_wire.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "tree/slotted_layout.h"

namespace dmindex::designs::dex {
namespace {

void Append(std::vector<std::byte>* out, const void* p, size_t n) {
  const size_t at = out->size();
  out->resize(at + n);
  if (n != 0) std::memcpy(out->data() + at, p, n);
}

WireBlock ToWire(const tree::ValueBlockRef& ref) {
  WireBlock b;
  b.addr = ref.addr.raw();
  b.read_bytes = ref.read_bytes;
  b.exact = ref.exact ? 1 : 0;
  return b;
}

tree::ValueBlockRef FromWire(uint64_t addr, uint32_t read_bytes, uint8_t exact) {
  return {GlobalAddress::FromRaw(addr), read_bytes, exact != 0};
}

}  // namespace

template <typename KV>
void EncodeRequest(const OffloadRequest<KV>& req, const tree::TreeOptions& o, GlobalAddress start,
                   uint8_t level, std::vector<std::byte>* out) {
  OffloadWire w;
  w.start = start.raw();
  w.node_bytes = o.node_bytes;
  w.op = static_cast<uint8_t>(req.op);
  w.level = level;
  if (!req.block.is_null()) w.flags |= OffloadWire::kValueBlock;
  out->clear();
  if constexpr (kSlotted<KV>) {
    w.flags |= OffloadWire::kBytesFormat;
    if (o.suffix_truncation) w.flags |= OffloadWire::kSuffixTruncation;
    if (o.max_value_bytes > o.inline_value_bytes) w.flags |= OffloadWire::kValueRefs;
    BytesWire b;
    b.max_key_bytes = static_cast<uint16_t>(o.max_key_bytes);
    b.inline_value_bytes = static_cast<uint16_t>(o.inline_value_bytes);
    b.key_len = static_cast<uint16_t>(req.key.size());
    b.value_len = req.block.is_null() ? static_cast<uint16_t>(req.value.size()) : 0;
    Append(out, &w, sizeof w);
    Append(out, &b, sizeof b);
    Append(out, req.key.data(), req.key.size());
    if (req.block.is_null()) Append(out, req.value.data(), req.value.size());
  } else {
    w.key = req.key;
    if (req.block.is_null()) {  // at most 8 bytes: the caller keeps longer ones out of line
      w.value_len = static_cast<uint8_t>(std::min<size_t>(req.value.size(), sizeof w.value));
      if (w.value_len > 0) std::memcpy(&w.value, req.value.data(), w.value_len);  // empty: data() may be null
    }
    Append(out, &w, sizeof w);
  }
  if (!req.block.is_null()) {
    const WireBlock b = ToWire(req.block);
    Append(out, &b, sizeof b);
  }
}

template <typename KV>
Status DecodeReply(std::span<const std::byte> reply, OffloadReply<KV>* out) {
  if (!fabric::ReadPod(reply, 0, &out->r)) return Status::Corruption("dex offload: short reply");
  const OffloadResult& r = out->r;
  out->block = {};
  if (r.flags & (OffloadResult::kValueInBlock | OffloadResult::kOldBlock))
    out->block = FromWire(r.value, r.block_bytes, r.block_exact);
  if constexpr (kSlotted<KV>) {
    const size_t tail = sizeof(OffloadResult);
    if (reply.size() != tail + r.separator_len + (r.flags & OffloadResult::kValueInBlock ? 0 : r.value_len))
      return Status::Corruption("dex offload: reply of " + std::to_string(reply.size()) + " bytes");
    const char* p = reinterpret_cast<const char*>(reply.data() + tail);
    out->separator.assign(p, r.separator_len);
    out->value.assign(p + r.separator_len, r.flags & OffloadResult::kValueInBlock ? 0 : r.value_len);
  } else {
    if (r.value_len > 8) return Status::Corruption("dex offload: inline value of " + std::to_string(r.value_len));
    out->separator = r.separator;
    out->value.assign(reinterpret_cast<const char*>(&r.value),
                      r.flags & OffloadResult::kValueInBlock ? 0 : r.value_len);
  }
  return Status::Ok();
}

Result<WireRequest> DecodeRequest(fabric::RpcRequest request) {
  WireRequest q;
  if (!fabric::ReadPod(request, 0, &q.w)) return Status::InvalidArgument("dex offload: short request");
  if (q.w.op > static_cast<uint8_t>(OffloadOp::kDelete)) return Status::InvalidArgument("dex offload: bad operation");
  q.bytes_format = (q.w.flags & OffloadWire::kBytesFormat) != 0;
  q.layout.node_bytes = q.w.node_bytes;
  size_t at = sizeof(OffloadWire);
  if (q.bytes_format) {
    BytesWire b;
    if (!fabric::ReadPod(request, at, &b)) return Status::InvalidArgument("dex offload: short request");
    at += sizeof b;
    if (b.key_len == 0 || b.key_len > b.max_key_bytes || b.value_len > b.inline_value_bytes ||
        request.size() < at + b.key_len + b.value_len)
      return Status::InvalidArgument("dex offload: key or value lengths over the request's limits");
    q.layout.max_key_bytes = b.max_key_bytes;
    q.layout.inline_value_bytes = b.inline_value_bytes;
    // Only whether values may go out of line matters to the layout (room for a reference).
    q.layout.max_value_bytes = b.inline_value_bytes + ((q.w.flags & OffloadWire::kValueRefs) ? 1 : 0);
    q.layout.suffix_truncation = (q.w.flags & OffloadWire::kSuffixTruncation) != 0;
    const char* p = reinterpret_cast<const char*>(request.data() + at);
    q.key = std::string_view(p, b.key_len);
    q.value = std::string_view(p + b.key_len, b.value_len);
    at += b.key_len + b.value_len;
  } else {
    if (q.w.value_len > 8) return Status::InvalidArgument("dex offload: inline value over 8 bytes");
    q.value = std::string_view(reinterpret_cast<const char*>(request.data()) + offsetof(OffloadWire, value),
                               q.w.value_len);
  }
  if (q.w.flags & OffloadWire::kValueBlock) {
    WireBlock b;
    if (!fabric::ReadPod(request, at, &b)) return Status::InvalidArgument("dex offload: short request");
    q.block = FromWire(b.addr, b.read_bytes, b.exact);
    q.value = {};
    at += sizeof b;
  }
  if (request.size() != at) return Status::InvalidArgument("dex offload: request of " + std::to_string(request.size()) +
                                                           " bytes, expected " + std::to_string(at));
  return q;
}

void EncodeReply(OffloadResult r, bool bytes_format, std::string_view separator, std::string_view value,
                 fabric::RpcReply* out) {
  r.value_len = static_cast<uint16_t>(value.size());
  if (!bytes_format) {
    if (!value.empty()) std::memcpy(&r.value, value.data(), std::min<size_t>(value.size(), 8));
    fabric::AppendPod(out, r);
    return;
  }
  r.separator_len = static_cast<uint16_t>(separator.size());
  fabric::AppendPod(out, r);
  Append(out, separator.data(), separator.size());
  Append(out, value.data(), value.size());
}

template void EncodeRequest<U64Format>(const OffloadRequest<U64Format>&, const tree::TreeOptions&, GlobalAddress,
                                       uint8_t, std::vector<std::byte>*);
template void EncodeRequest<BytesFormat>(const OffloadRequest<BytesFormat>&, const tree::TreeOptions&,
                                         GlobalAddress, uint8_t, std::vector<std::byte>*);
template Status DecodeReply<U64Format>(std::span<const std::byte>, OffloadReply<U64Format>*);
template Status DecodeReply<BytesFormat>(std::span<const std::byte>, OffloadReply<BytesFormat>*);

}  // namespace dmindex::designs::dex
