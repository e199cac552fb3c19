// XStore's lookup (§5.2.1, §5.3.2; client.h says why it is linearizable): predict the leaves,
// READ them in one unordered batch - whole, or with slot_read the header and the predicted
// slots of each - validate each image with the tree core's check words, answer from the
// image whose fences cover the key; a leaf that split since training (its incarnation differs
// from the translation table's) sent keys right: follow its sibling link `speculate` times,
// then let the memory server answer. A sub-model seen stale reads its directory word and the
// model word in its next batch and fetches what was retrained.
#pragma once

#include "designs/xstore/client_state.h"

namespace dmindex::designs::xstore {

template <tree::KeyValueTraits KV>
class PointReader {
 public:
  using State = ClientState<KV>;
  using Session = typename State::Session;
  using KeyRef = typename KV::KeyRef;
  using Value = typename KV::Value;

  explicit PointReader(const State& state) : c_(state) {}

  Status Lookup(Session& s, KeyRef key, Value* value) const;

 private:
  using Prediction = typename State::Prediction;
  using LeafRead = typename State::LeafRead;

  // READs the predicted leaves into s.leaves / s.reads (and, with `refresh`, the sub-model's
  // directory word and the model word) in one batch and validates each image; torn ones are
  // read again alone.
  Status ReadLeaves(Session& s, size_t p, const Prediction& pred, bool refresh, uint64_t* dir_word,
                    uint64_t* model_word) const;
  // slot_read: whether the slots read of a covering leaf decide about `key`; *slot: its slot
  // (-1: absent).
  bool Decides(const std::byte* image, const LeafRead& r, KeyRef key, int* slot) const;
  // After a lookup into a stale sub-model: fetch what the directory and model words name.
  Status Refresh(Session& s, size_t p, const Prediction& pred, uint64_t dir_word, uint64_t model_word) const;

  const State& c_;
};

}  // namespace dmindex::designs::xstore
