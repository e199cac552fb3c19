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

const uint64_t kCleared = 0;

// The WRITEs of `found`'s node pieces, from its payload, appended to `verbs`.
void PieceVerbs(const FoundRecord& found, std::vector<fabric::Verb>* verbs) {
  const GlobalAddress node = GlobalAddress::FromRaw(found.header[3]);
  uint32_t at = 0;
  for (uint32_t i = 0; i < found.header[4]; ++i) {
    const uint64_t piece = found.header[kFirstPieceWord + i];
    const uint32_t len = static_cast<uint32_t>(piece);
    verbs->push_back(fabric::Verb::Write(node + (piece >> 32), found.payload.data() + at, len));
    at += len;
  }
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
  out->clear = fabric::Verb::Write(block, &kCleared, 8);
  return Status::Ok();
}

Status ReadRedoRecord(fabric::Endpoint& ep, uint64_t dead_word, GlobalAddress lock_word_addr,
                      uint32_t node_bytes, FoundRecord* found) {
  found->whole = false;
  found->payload.clear();
  const GlobalAddress block = LockWordRedoBlock(dead_word, lock_word_addr.node());
  if (block.is_null()) return Status::Ok();  // the holder named no block: it wrote nothing
  uint64_t (&h)[8] = found->header;
  DMX_RETURN_IF_ERROR(ep.Read(block, h, kRedoHeaderBytes));
  // Word 0 names another holding (or none): this holding's record never landed whole, so its
  // node write never started, or it was cleared after the node write completed.
  if (h[0] != dead_word || h[2] != lock_word_addr.raw() || h[4] == 0 || h[4] > kRedoMaxPieces)
    return Status::Ok();
  const GlobalAddress node = GlobalAddress::FromRaw(h[3]);
  uint32_t payload = 0;
  for (uint32_t i = 0; i < h[4]; ++i) {
    const uint64_t piece = h[kFirstPieceWord + i];
    if ((piece >> 32) + static_cast<uint32_t>(piece) > node_bytes) return Status::Ok();  // torn header
    payload += static_cast<uint32_t>(piece);
  }
  if (payload > node_bytes || node.node() != block.node()) return Status::Ok();  // torn header
  found->payload.resize(payload);
  if (payload > 0) DMX_RETURN_IF_ERROR(ep.Read(block + kRedoHeaderBytes, found->payload.data(), payload));
  std::vector<fabric::Verb> pieces;
  PieceVerbs(*found, &pieces);
  found->whole = Checksum(h, pieces) == h[1];  // else the record never landed whole
  return Status::Ok();
}

void AdoptRedoRecord(FoundRecord* found, GlobalAddress block, uint64_t word, std::vector<fabric::Verb>* adopt,
                     std::vector<fabric::Verb>* finish) {
  uint64_t (&h)[8] = found->header;
  PieceVerbs(*found, finish);
  h[0] = word;
  h[1] = Checksum(h, *finish);
  adopt->push_back(fabric::Verb::Write(block, h, kRedoHeaderBytes));
  if (!found->payload.empty())
    adopt->push_back(fabric::Verb::Write(block + kRedoHeaderBytes, found->payload.data(),
                                         static_cast<uint32_t>(found->payload.size())));
  finish->push_back(fabric::Verb::Write(block, &kCleared, 8));
}

Status ReplayRedoRecord(fabric::Endpoint& ep, uint64_t dead_word, GlobalAddress lock_word_addr,
                        uint32_t node_bytes, bool* replayed) {
  *replayed = false;
  FoundRecord found;
  DMX_RETURN_IF_ERROR(ReadRedoRecord(ep, dead_word, lock_word_addr, node_bytes, &found));
  if (!found.whole) return Status::Ok();
  std::vector<fabric::Verb> verbs;
  PieceVerbs(found, &verbs);
  verbs.push_back(fabric::Verb::Write(LockWordRedoBlock(dead_word, lock_word_addr.node()), &kCleared, 8));
  DMX_RETURN_IF_ERROR(ep.Post(verbs, fabric::Ordering::kInOrder));
  *replayed = true;
  return Status::Ok();
}

}  // namespace dmindex::tree
