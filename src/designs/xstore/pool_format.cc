#include "designs/xstore/pool_format.h"

#include <algorithm>
#include <cstring>

#include "tree/node_check.h"
#include "tree/node_layout.h"

namespace dmindex::designs::xstore {
namespace {

using tree::LoadAt;
using tree::StoreAt;

constexpr uint64_t kSuperMagic = 0x3130524f54535831ull;  // "1XSTOR01"

uint32_t Round8(size_t n) { return static_cast<uint32_t>((n + 7) / 8 * 8); }

// Seals a record: its first word is the hash of the rest.
void Seal(std::vector<std::byte>& r) { StoreAt(r.data(), 0, tree::HeaderCheck(r.data() + 8, r.size() - 8)); }
bool Sealed(const std::byte* image, uint32_t bytes) {
  return bytes >= 16 && LoadAt<uint64_t>(image, 0) == tree::HeaderCheck(image + 8, bytes - 8);
}

}  // namespace

uint64_t TableEntry::Pack(GlobalAddress leaf, uint64_t incarnation, uint32_t count) {
  return (leaf.offset() >> 6) | ((incarnation & kIncarnationMask) << 36) |
         (uint64_t{std::min<uint32_t>(count, 255)} << 56);
}

TableEntry TableEntry::Unpack(uint64_t word) {
  return {(word & ((uint64_t{1} << 36) - 1)) << 6, static_cast<uint32_t>((word >> 36) & kIncarnationMask),
          static_cast<uint32_t>(word >> 56)};
}

namespace descriptor {

void EncodeConfig(const PartitionConfig& c, std::byte* d) {
  std::byte* cfg = d + kConfigOff;
  std::memset(cfg, 0, kBytes - kConfigOff);
  StoreAt(cfg, 8, uint64_t{static_cast<uint8_t>(c.format)} | (uint64_t{c.partition} << 8) |
                      (uint64_t{c.retrain} << 24) | (uint64_t{c.validate} << 25));
  StoreAt(cfg, 16, uint64_t{c.node_bytes} | (uint64_t{c.max_key_bytes} << 32));
  StoreAt(cfg, 24, uint64_t{c.inline_value_bytes} | (uint64_t{c.max_value_bytes} << 32));
  StoreAt(cfg, 32, uint64_t{c.keys_per_model} | (uint64_t{c.expand_at} << 32));
  StoreAt(cfg, 40, uint64_t{c.train_threads} | (uint64_t{c.top_segments} << 32));
  StoreAt(cfg, 0, tree::HeaderCheck(cfg + 8, kBytes - kConfigOff - 8));
}

bool DecodeConfig(const std::byte* d, PartitionConfig* c) {
  const std::byte* cfg = d + kConfigOff;
  if (LoadAt<uint64_t>(cfg, 0) != tree::HeaderCheck(cfg + 8, kBytes - kConfigOff - 8)) return false;
  const uint64_t w = LoadAt<uint64_t>(cfg, 8);
  c->format = static_cast<KeyFormat>(static_cast<uint8_t>(w));
  c->partition = static_cast<uint16_t>(w >> 8);
  c->retrain = (w >> 24) & 1;
  c->validate = (w >> 25) & 1;
  const uint64_t sizes = LoadAt<uint64_t>(cfg, 16), values = LoadAt<uint64_t>(cfg, 24);
  const uint64_t models = LoadAt<uint64_t>(cfg, 32);
  c->node_bytes = static_cast<uint32_t>(sizes);
  c->max_key_bytes = static_cast<uint32_t>(sizes >> 32);
  c->inline_value_bytes = static_cast<uint32_t>(values);
  c->max_value_bytes = static_cast<uint32_t>(values >> 32);
  c->keys_per_model = static_cast<uint32_t>(models);
  c->expand_at = static_cast<uint32_t>(models >> 32);
  const uint64_t training = LoadAt<uint64_t>(cfg, 40);
  c->train_threads = static_cast<uint32_t>(training);
  c->top_segments = static_cast<uint32_t>(training >> 32);
  return true;
}

}  // namespace descriptor

// Superblock: check | magic | total (32) partitions (32) | per partition: descriptor,
// boundary length, boundary bytes padded to 8.
std::vector<std::byte> Superblock::Encode() const {
  size_t bytes = kHeadBytes;
  for (const Partition& p : partitions) bytes += 16 + Round8(p.low.size());
  std::vector<std::byte> r(bytes);
  StoreAt(r.data(), 8, kSuperMagic);
  StoreAt(r.data(), 16, uint64_t{static_cast<uint32_t>(bytes)} | (uint64_t{partitions.size()} << 32));
  size_t at = kHeadBytes;
  for (const Partition& p : partitions) {
    StoreAt(r.data(), static_cast<uint32_t>(at), p.descriptor.raw());
    StoreAt(r.data(), static_cast<uint32_t>(at + 8), uint64_t{p.low.size()});
    std::memcpy(r.data() + at + 16, p.low.data(), p.low.size());
    at += 16 + Round8(p.low.size());
  }
  Seal(r);
  return r;
}

uint32_t Superblock::TotalBytes(const std::byte* head) {
  if (LoadAt<uint64_t>(head, 8) != kSuperMagic) return 0;
  return static_cast<uint32_t>(LoadAt<uint64_t>(head, 16));
}

bool Superblock::Decode(const std::byte* image, uint32_t bytes, Superblock* out) {
  if (bytes < kHeadBytes || !Sealed(image, bytes) || TotalBytes(image) != bytes) return false;
  const uint64_t n = LoadAt<uint64_t>(image, 16) >> 32;
  out->partitions.clear();
  size_t at = kHeadBytes;
  for (uint64_t i = 0; i < n; ++i) {
    if (at + 16 > bytes) return false;
    Partition p;
    p.descriptor = GlobalAddress::FromRaw(LoadAt<uint64_t>(image, static_cast<uint32_t>(at)));
    const uint64_t len = LoadAt<uint64_t>(image, static_cast<uint32_t>(at + 8));
    if (len > bytes || at + 16 + len > bytes) return false;
    p.low.assign(reinterpret_cast<const char*>(image + at + 16), len);
    at += 16 + Round8(len);
    out->partitions.push_back(std::move(p));
  }
  return !out->partitions.empty();
}

// Model set: check | epoch | models (32) prefix length (32) | knots | directory | keys |
// total bytes | alphabet (4 words) | knots (x, y) | prefix bytes.
std::vector<std::byte> ModelSetRecord::Encode() const {
  const auto& knots = top.knots();
  const uint32_t at_knots = 88, at_prefix = at_knots + 16 * static_cast<uint32_t>(knots.size());
  std::vector<std::byte> r(at_prefix + Round8(prefix.size()));
  StoreAt(r.data(), 8, epoch);
  StoreAt(r.data(), 16, uint64_t{top.models()} | (uint64_t{prefix.size()} << 32));
  StoreAt(r.data(), 24, uint64_t{knots.size()});
  StoreAt(r.data(), 32, directory.raw());
  StoreAt(r.data(), 40, keys);
  StoreAt(r.data(), 48, uint64_t{r.size()});
  for (uint32_t w = 0; w < 4; ++w) StoreAt(r.data(), 56 + 8 * w, alphabet[w]);
  for (size_t k = 0; k < knots.size(); ++k) {
    StoreAt(r.data(), static_cast<uint32_t>(at_knots + 16 * k), knots[k].x);
    StoreAt(r.data(), static_cast<uint32_t>(at_knots + 16 * k + 8), knots[k].y);
  }
  std::memcpy(r.data() + at_prefix, prefix.data(), prefix.size());
  Seal(r);
  return r;
}

bool ModelSetRecord::Decode(const std::byte* image, uint32_t bytes, ModelSetRecord* out) {
  constexpr uint32_t at_knots = 88;
  if (bytes < at_knots || !Sealed(image, bytes) || LoadAt<uint64_t>(image, 48) != bytes) return false;
  const uint64_t w = LoadAt<uint64_t>(image, 16);
  const uint32_t models = static_cast<uint32_t>(w), prefix_len = static_cast<uint32_t>(w >> 32);
  const uint64_t knots = LoadAt<uint64_t>(image, 24);
  if (models == 0 || knots > bytes || at_knots + 16 * knots + prefix_len > bytes) return false;
  std::vector<learned::Point> points(knots);
  for (size_t k = 0; k < knots; ++k) {
    points[k].x = LoadAt<uint64_t>(image, static_cast<uint32_t>(at_knots + 16 * k));
    points[k].y = LoadAt<double>(image, static_cast<uint32_t>(at_knots + 16 * k + 8));
  }
  out->epoch = LoadAt<uint64_t>(image, 8);
  out->top = learned::TopModel(std::move(points), models);
  out->directory = GlobalAddress::FromRaw(LoadAt<uint64_t>(image, 32));
  out->keys = LoadAt<uint64_t>(image, 40);
  for (uint32_t a = 0; a < 4; ++a) out->alphabet[a] = LoadAt<uint64_t>(image, 56 + 8 * a);
  out->prefix.assign(reinterpret_cast<const char*>(image + at_knots + 16 * knots), prefix_len);
  return true;
}

// Sub-model: check | epoch | id (32) pages (32) | generation | keys | slope | intercept | x0 |
// below | above | x_min | x_max | table.
std::vector<std::byte> SubModelRecord::Encode() const {
  std::vector<std::byte> r(Bytes());
  StoreAt(r.data(), 8, epoch);
  StoreAt(r.data(), 16, uint64_t{id} | (uint64_t{static_cast<uint32_t>(table.size())} << 32));
  StoreAt(r.data(), 24, generation);
  StoreAt(r.data(), 32, keys);
  StoreAt(r.data(), 40, model.line.slope);
  StoreAt(r.data(), 48, model.line.intercept);
  StoreAt(r.data(), 56, model.line.x0);
  StoreAt(r.data(), 64, model.error.below);
  StoreAt(r.data(), 72, model.error.above);
  StoreAt(r.data(), 80, model.x_min);
  StoreAt(r.data(), 88, model.x_max);
  std::memcpy(r.data() + kHeadBytes, table.data(), 8 * table.size());
  Seal(r);
  return r;
}

bool SubModelRecord::Decode(const std::byte* image, uint32_t bytes, SubModelRecord* out) {
  if (bytes < kHeadBytes || !Sealed(image, bytes)) return false;
  const uint64_t w = LoadAt<uint64_t>(image, 16);
  const uint32_t pages = static_cast<uint32_t>(w >> 32);
  if (pages == 0 || kHeadBytes + 8 * uint64_t{pages} != bytes) return false;
  out->epoch = LoadAt<uint64_t>(image, 8);
  out->id = static_cast<uint32_t>(w);
  out->generation = LoadAt<uint64_t>(image, 24);
  out->keys = LoadAt<uint64_t>(image, 32);
  out->model.line.slope = LoadAt<double>(image, 40);
  out->model.line.intercept = LoadAt<double>(image, 48);
  out->model.line.x0 = LoadAt<uint64_t>(image, 56);
  out->model.error.below = LoadAt<double>(image, 64);
  out->model.error.above = LoadAt<double>(image, 72);
  out->model.x_min = LoadAt<uint64_t>(image, 80);
  out->model.x_max = LoadAt<uint64_t>(image, 88);
  out->model.pages = pages;
  out->table.resize(pages);
  std::memcpy(out->table.data(), image + kHeadBytes, 8 * size_t{pages});
  return true;
}

}  // namespace dmindex::designs::xstore
