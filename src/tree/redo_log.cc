#include "tree/redo_log.h"

#include "tree/lock_word.h"

#include <string>

// Header-only use of the packaged xxHash, as node_check.cc.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace dmindex::tree {
namespace {

constexpr uint64_t kRedoSeed = 0x7265646f2d6c6f67ull;  // "redo-log"
constexpr uint32_t kFirstPieceWord = 5;

// Checksum of header words 0 and 2.. (word 1 holds it) and the payload pieces in order.
uint64_t Checksum(const uint64_t (&h)[8], std::span<const fabric::Verb> pieces) {
  const uint64_t words[7] = {h[0], h[2], h[3], h[4], h[5], h[6], h[7]};
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset_withSeed(&state, kRedoSeed);
  XXH3_64bits_update(&state, words, sizeof words);
  for (const fabric::Verb& p : pieces) XXH3_64bits_update(&state, p.local, p.length);
  return XXH3_64bits_digest(&state) | 1;  // never 0, so fresh memory never matches
}

}  // namespace

Status BuildRedoRecord(GlobalAddress block, uint64_t lock_word, GlobalAddress lock_word_addr,
                       GlobalAddress node, uint32_t node_bytes, std::span<const fabric::Verb> writes,
                       uint64_t (&header)[8], RedoRecord* out) {
  out->record.clear();
  for (uint64_t& w : header) w = 0;
  header[0] = lock_word;
  header[2] = lock_word_addr.raw();
  header[3] = node.raw();
  uint32_t payload = 0;
  std::vector<fabric::Verb> pieces;
  for (const fabric::Verb& v : writes) {
    if (v.kind != fabric::VerbKind::kWrite || v.remote.node() != node.node() ||
        v.remote.offset() < node.offset() || v.remote.offset() >= node.offset() + node_bytes)
      continue;  // not this node: a fresh node or value block nobody can reach yet
    const uint64_t in_node = v.remote.offset() - node.offset();
    if (header[4] == kRedoMaxPieces || in_node + v.length > node_bytes || payload + v.length > node_bytes)
      return Status::InvalidArgument("a write under the lock of " + node.ToString() +
                                     " does not fit its redo record (" + std::to_string(writes.size()) +
                                     " verbs)");
    header[kFirstPieceWord + header[4]++] = (in_node << 32) | v.length;
    pieces.push_back(fabric::Verb::Write(block + kRedoHeaderBytes + payload, v.local, v.length));
    payload += v.length;
  }
  if (pieces.empty()) return Status::Ok();
  // Over the pieces' buffers as they are now: they do not change before the batch is posted.
  header[1] = Checksum(header, pieces);
  out->record.push_back(fabric::Verb::Write(block, header, kRedoHeaderBytes));
  out->record.insert(out->record.end(), pieces.begin(), pieces.end());
  static const uint64_t kCleared = 0;
  out->clear = fabric::Verb::Write(block, &kCleared, 8);
  return Status::Ok();
}

Status ReplayRedoRecord(fabric::Endpoint& ep, uint64_t dead_word, GlobalAddress lock_word_addr,
                        uint32_t node_bytes, bool* replayed) {
  *replayed = false;
  const GlobalAddress block = LockWordRedoBlock(dead_word, lock_word_addr.node());
  if (block.is_null()) return Status::Ok();  // the holder named no block: it wrote nothing
  uint64_t h[8];
  DMX_RETURN_IF_ERROR(ep.Read(block, h, kRedoHeaderBytes));
  // Word 0 names another holding (or none): this holding's record never landed whole, so its
  // node write never started, or it was cleared after the node write completed.
  if (h[0] != dead_word || h[2] != lock_word_addr.raw() || h[4] == 0 || h[4] > kRedoMaxPieces)
    return Status::Ok();
  const GlobalAddress node = GlobalAddress::FromRaw(h[3]);
  uint32_t payload = 0;
  for (uint32_t i = 0; i < h[4]; ++i) payload += static_cast<uint32_t>(h[kFirstPieceWord + i]);
  if (payload > node_bytes || node.node() != block.node()) return Status::Ok();  // torn header
  std::vector<std::byte> bytes(payload);
  if (payload > 0) DMX_RETURN_IF_ERROR(ep.Read(block + kRedoHeaderBytes, bytes.data(), payload));
  std::vector<fabric::Verb> pieces;
  uint32_t at = 0;
  for (uint32_t i = 0; i < h[4]; ++i) {
    const uint64_t piece = h[kFirstPieceWord + i];
    const uint32_t len = static_cast<uint32_t>(piece);
    if ((piece >> 32) + len > node_bytes) return Status::Ok();  // torn header
    pieces.push_back(fabric::Verb::Write(node + (piece >> 32), bytes.data() + at, len));
    at += len;
  }
  if (Checksum(h, pieces) != h[1]) return Status::Ok();  // the record never landed whole
  static const uint64_t kCleared = 0;
  pieces.push_back(fabric::Verb::Write(block, &kCleared, 8));
  DMX_RETURN_IF_ERROR(ep.Post(pieces, fabric::Ordering::kInOrder));
  *replayed = true;
  return Status::Ok();
}

}  // namespace dmindex::tree
