// The one place that decides whether a node image read from remote memory may be used.
// Every read path of every design goes through NodeValidator::Decode (see
// docs/SYNCHRONIZATION.md for why the checks below catch every torn read).
#pragma once

#include <cstddef>

#include "tree/internal_node.h"
#include "tree/leaf_node.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class NodeValidator {
 public:
  // validate = false accepts images unchecked: only for proving that the checker is needed
  // (the harness turns it off and expects torn reads to surface).
  NodeValidator(const NodeLayout<KV>& layout, bool validate)
      : leaf_(layout), internal_(layout), validate_(validate) {}

  // Decodes the header of `image` and validates the header and every part of the body a
  // reader relies on: all used slots of a leaf (each bound to the header's version), or the
  // body check of an internal node. False means torn (or not a node): read again. An
  // accepted unsorted leaf never shows a key in two slots (one slot per key and version,
  // leaf_node.h), however far apart the instants its slots were read at.
  bool Decode(const std::byte* image, NodeHeader<KV>* h) const {
    if (!HeaderCodec<KV>::Read(image, h, validate_)) return false;
    if (!validate_) return true;
    return h->is_leaf() ? leaf_.ValidSlots(image, *h) : internal_.ValidBody(image, *h);
  }

  bool validating() const { return validate_; }
  const LeafCodec<KV>& leaf() const { return leaf_; }
  const InternalCodec<KV>& internal() const { return internal_; }

 private:
  LeafCodec<KV> leaf_;
  InternalCodec<KV> internal_;
  bool validate_;
};

}  // namespace dmindex::tree
