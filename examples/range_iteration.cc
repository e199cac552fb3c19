// Iterating a range: bulk-load sorted pairs, then walk key ranges in order with an iterator
// (Seek, Next while Valid, an optional upper bound). Checks what it reads.
//
//   range_iteration [design]    design: any of dmindex::Index::Designs() (default sherman)
#include <dmindex/index.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

void Check(const dmindex::Status& s, const std::string& what) {
  if (s.ok()) return;
  std::cerr << "range_iteration: " << what << ": " << s.ToString() << "\n";
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  dmindex::IndexOptions options;
  options.design = argc > 1 ? argv[1] : "sherman";
  options.name = "ranges";
  // The u64 key format: 8-byte big-endian integer keys (dmindex::U64Key), so byte order is
  // numeric order - the fixed-size fast path. (The default is byte-string keys.)
  options.key_format = dmindex::KeyFormat::kU64;
  // No cluster given: the index opens on an embedded cluster of its own.
  auto index = dmindex::Index::Open(options);
  Check(index.status(), "opening the index");

  // The even keys 2..20000, value = key * 3, as 8-byte integers. BulkLoad wants them sorted
  // and unique, into an empty index, and builds the tree bottom-up (much faster than inserts).
  std::vector<dmindex::KeyValue> pairs;
  for (uint64_t key = 2; key <= 20000; key += 2)
    pairs.push_back({dmindex::U64Key(key).str(), dmindex::U64Key(key * 3).str()});
  Check((*index)->BulkLoad(pairs), "bulk load");

  {
    auto session = (*index)->OpenSession();
    Check(session.status(), "opening a session");

    // The keys in [1001, 2001): half-open, like every range of the API. The iterator reads
    // in batches and stops before the upper bound, without reading past it.
    dmindex::ReadOptions range;
    range.upper_bound = dmindex::U64Key(2001).str();
    dmindex::Iterator it = (*session)->NewIterator(range);
    size_t count = 0;
    uint64_t first = 0, last = 0;
    for (it.Seek(dmindex::U64Key(1001)); it.Valid(); it.Next()) {
      const uint64_t key = dmindex::U64Key::Decode(it.key());
      const uint64_t value = dmindex::U64Key::Decode(it.value());
      if (value != key * 3) {
        std::cerr << "range_iteration: key " << key << " holds " << value << "\n";
        return 1;
      }
      if (count++ == 0) first = key;
      last = key;
    }
    // !Valid() at the end of the range, or because something failed: status() says which.
    Check(it.status(), "iterating [1001, 2001)");
    std::cout << "[1001, 2001): " << count << " keys, " << first << " .. " << last << "\n";
    if (count != 500 || first != 1002 || last != 2000) return 1;

    // No upper bound: from a key to the end of the index. Writes made meanwhile may or may
    // not be seen (an iterator is not a snapshot), but every key present throughout is.
    Check((*session)->Delete(19000), "delete 19000");
    dmindex::Iterator tail = (*session)->NewIterator();
    count = 0;
    for (tail.Seek(dmindex::U64Key(18001)); tail.Valid(); tail.Next()) ++count;
    Check(tail.status(), "iterating from 18001");
    std::cout << "from 18001 to the end: " << count << " keys (19000 deleted)\n";
    if (count != 999) return 1;
  }  // iterators and sessions go before Close

  Check((*index)->Close(), "closing the index");
  std::cout << "closed\n";
  return 0;
}
