// The one place that decides whether a node image read from remote memory may be used.
// Every read path of every design goes through NodeValidator::Decode (see
// docs/SYNCHRONIZATION.md for why the checks below catch every torn read).
#pragma once

#include <cstddef>

#include "tree/internal_node.h"
#include "tree/leaf_node.h"
#include "tree/slotted_internal.h"
#include "tree/slotted_leaf.h"

namespace dmindex::tree {

template <KeyValueTraits KV>
class NodeValidator {
 public:
  using Leaf = typename KV::LeafCodec;
  using Internal = typename KV::InternalCodec;
  using Header = typename KV::HeaderCodec;

  // validate = false accepts images unchecked: only for proving that the checker is needed
  // (the harness turns it off and expects torn reads to surface). Offsets into the image are
  // bounds-checked either way: no image sends a reader outside its buffer.
  NodeValidator(const NodeLayout<KV>& layout, bool validate)
      : header_(layout), leaf_(layout), internal_(layout), validate_(validate) {}

  // Decodes the header of `image` and validates the header and every part of the body a
  // reader relies on: all used slots of a leaf (each bound to the header's version), or the
  // body check of an internal node. False means torn (or not a node): read again. An
  // accepted unsorted leaf never shows a key in two slots (one slot per key and version,
  // leaf_node.h), however far apart the instants its slots were read at.
  bool Decode(const std::byte* image, NodeHeader<KV>* h) const { return DecodeHeader(image, h) && ValidBody(image, *h); }
  // Decode in two steps, for a reader that validates only part of a leaf's body (a lookup:
  // Leaf::FindValidated): the header, then (ValidBody) the body Decode would validate.
  bool DecodeHeader(const std::byte* image, NodeHeader<KV>* h) const { return header_.Read(image, h, validate_); }
  bool ValidBody(const std::byte* image, const NodeHeader<KV>& h) const {
    return h.is_leaf() ? leaf_.ValidBody(image, h, validate_) : internal_.ValidBody(image, h, validate_);
  }
  // Decodes a header without validating it: of an image this thread has just built.
  bool ReadHeader(const std::byte* image, NodeHeader<KV>* h) const {
    return header_.Read(image, h, false);
  }

  bool validating() const { return validate_; }
  const Leaf& leaf() const { return leaf_; }
  const Internal& internal() const { return internal_; }

 private:
  Header header_;
  Leaf leaf_;
  Internal internal_;
  bool validate_;
};

}  // namespace dmindex::tree
