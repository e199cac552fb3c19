#include "alloc/catalog.h"

#include <cstring>
#include <unordered_map>
#include <vector>

#include "alloc/index_hold.h"
#include "common/retry.h"
#include "fabric/rpc.h"

#include "fabric/pool_identity.h"
#include "fabric/pool_layout.h"

namespace dmindex::alloc {
namespace {

// One 192-byte entry; three cache lines. Everything but state, root and aux is written once,
// before state becomes kReady, and never changes afterwards.
struct RawEntry {
  // Phase in the low byte: kFree -> kClaimed (CAS, the generation one up) -> kReady (ordered
  // write after the fields) -> kMarked (CAS: a drop checks for holders) -> kCommitted (CAS, no
  // holder seen; or back to kReady, holders seen) -> kFree (CAS, after its chunks were freed).
  // The generation above it counts the indexes created in the slot: with the slot it makes
  // the index's owner tag, never used again for another index.
  uint64_t state;
  uint64_t root;
  uint64_t aux[CatalogEntry::kAuxWords];
  char name[32];
  char design[16];
  uint32_t node_bytes;
  uint32_t format;
  uint64_t magic;
  uint32_t key_format;
  uint32_t max_key_bytes;
  uint32_t inline_value_bytes;
  uint32_t max_value_bytes;
  // Identities (PoolIdentity::id) of the pools of memory nodes 1..6 when the entry was
  // created; 0: no such node (or an entry from before they were recorded).
  uint64_t pools[Catalog::kRecordedPools];
};
static_assert(sizeof(RawEntry) == 192);

constexpr uint64_t kFree = 0, kClaimed = 1, kReady = 2, kMarked = 3, kCommitted = 4;
constexpr bool Dropping(uint64_t state) { return (state & 0xff) == kMarked || (state & 0xff) == kCommitted; }
constexpr uint64_t Phase(uint64_t state) { return state & 0xff; }
constexpr uint64_t Generation(uint64_t state) { return state >> 8; }
constexpr uint64_t State(uint64_t generation, uint64_t phase) { return generation << 8 | phase; }
// Generation 0: an entry made before generations (format 2 pools kept by --data-dir), whose
// chunks carry no tag.
constexpr uint64_t OwnerTag(uint32_t slot, uint64_t state) {
  return Generation(state) == 0 ? 0 : Generation(state) << 8 | slot;
}
constexpr uint64_t kMagic = 0x3130544143584d44ull;  // "DMXCAT01"
constexpr uint32_t kEntries = fabric::kSuperblockBytes / sizeof(RawEntry);

GlobalAddress EntryAddress(uint32_t slot) {
  return GlobalAddress(0, fabric::kSuperblockOffset + slot * sizeof(RawEntry));
}

// A table read twice: fields of an entry that was already ready at the first read, in the
// same generation, are final, so the second read returns them untorn (a single READ may
// tear across lines).
Status ReadTable(fabric::Endpoint& ep, std::vector<RawEntry>* table) {
  std::vector<RawEntry> first(kEntries);
  table->resize(kEntries);
  const uint32_t bytes = kEntries * sizeof(RawEntry);
  DMX_RETURN_IF_ERROR(ep.Read(EntryAddress(0), first.data(), bytes));
  DMX_RETURN_IF_ERROR(ep.Read(EntryAddress(0), table->data(), bytes));
  for (uint32_t i = 0; i < kEntries; ++i)
    if (Phase((*table)[i].state) == kReady && first[i].state != (*table)[i].state)
      (*table)[i].state = State(Generation((*table)[i].state), kClaimed);
  return Status::Ok();
}

std::string_view Field(const char* chars, size_t cap) {
  return std::string_view(chars, strnlen(chars, cap));
}

Result<CatalogEntry> ToEntry(const RawEntry& raw, uint32_t slot) {
  if (raw.magic != kMagic || raw.format != Catalog::kFormatVersion)
    return Status::Corruption("catalog slot " + std::to_string(slot) + " has format " +
                              std::to_string(raw.format) + ", expected " +
                              std::to_string(Catalog::kFormatVersion));
  CatalogEntry e;
  e.name = Field(raw.name, sizeof raw.name);
  e.design = Field(raw.design, sizeof raw.design);
  e.node_bytes = raw.node_bytes;
  e.schema.format = static_cast<KeyFormat>(raw.key_format);
  e.schema.max_key_bytes = raw.max_key_bytes;
  e.schema.inline_value_bytes = raw.inline_value_bytes;
  e.schema.max_value_bytes = raw.max_value_bytes;
  e.slot = slot;
  e.owner = OwnerTag(slot, raw.state);
  e.root_word = EntryAddress(slot) + offsetof(RawEntry, root);
  return e;
}

Status CheckName(std::string_view name) {
  if (name.empty() || name.size() > Catalog::kMaxNameBytes)
    return Status::InvalidArgument("index name must have 1.." +
                                   std::to_string(Catalog::kMaxNameBytes) + " bytes");
  return Status::Ok();
}

// A missing index is often one that was there before its memory server restarted: say how
// young the pool is, so the reader can tell.
Status Missing(fabric::Endpoint& ep, std::string_view name) {
  std::string m = "no index named '" + std::string(name) + "' in the catalog";
  auto pool = fabric::ReadPoolIdentity(ep, 0);
  if (pool.ok())
    m += " of memory node 0 (" + pool->ToString() +
         "; a memory server without --data-dir starts with an empty pool, so an index created "
         "before its last restart is gone)";
  return Status::NotFound(m);
}

// NotFound if a pool the entry recorded at its creation is not the one there now.
Status CheckPools(fabric::Endpoint& ep, const RawEntry& raw, std::string_view name) {
  for (uint16_t k = 0; k < Catalog::kRecordedPools; ++k) {
    if (raw.pools[k] == 0) continue;
    const uint16_t node = k + 1;
    auto pool = fabric::ReadPoolIdentity(ep, node);
    if (pool.ok() && pool->id == raw.pools[k]) continue;
    if (!pool.ok() && !pool.status().IsInvalidArgument() && !pool.status().IsCorruption())
      return pool.status();  // unreachable now: no verdict
    return Status::NotFound(
        "index '" + std::string(name) + "' is gone: it had memory in memory node " +
        std::to_string(node) + "'s pool, and that pool is no longer there (" +
        (pool.ok() ? "the node now holds " + pool->ToString() : pool.status().message()) +
        "; a memory server whose pool is volatile starts empty when it restarts)");
  }
  return Status::Ok();
}

Status RecordPools(fabric::Endpoint& ep, uint16_t memory_nodes, RawEntry* raw) {
  for (uint16_t node = 1; node < memory_nodes && node <= Catalog::kRecordedPools; ++node) {
    auto pool = fabric::ReadPoolIdentity(ep, node);
    if (!pool.ok()) return pool.status();
    raw->pools[node - 1] = pool->id;
  }
  return Status::Ok();
}

}  // namespace

Result<CatalogEntry> Catalog::Open(fabric::Endpoint& ep, std::string_view name) {
  DMX_RETURN_IF_ERROR(CheckName(name));
  std::vector<RawEntry> table;
  DMX_RETURN_IF_ERROR(ReadTable(ep, &table));
  for (uint32_t i = 0; i < kEntries; ++i) {
    if (Field(table[i].name, sizeof table[i].name) != name) continue;
    if (Dropping(table[i].state))
      return Status::NotFound("index '" + std::string(name) + "' is being dropped (a drop that stopped half-way "
                              "is finished by the next Drop or opener of the name)");
    if (Phase(table[i].state) != kReady) continue;
    DMX_RETURN_IF_ERROR(CheckPools(ep, table[i], name));
    return ToEntry(table[i], i);
  }
  return Missing(ep, name);
}

Result<std::vector<CatalogEntry>> Catalog::List(fabric::Endpoint& ep) {
  std::vector<RawEntry> table;
  DMX_RETURN_IF_ERROR(ReadTable(ep, &table));
  std::vector<CatalogEntry> entries;
  for (uint32_t i = 0; i < kEntries; ++i) {
    if (Phase(table[i].state) != kReady) continue;
    auto entry = ToEntry(table[i], i);
    if (!entry.ok()) return entry.status();
    entries.push_back(std::move(entry).value());
  }
  return entries;
}

Result<DropMark> Catalog::MarkDropping(fabric::Endpoint& ep, std::string_view name, uint64_t owner) {
  DMX_RETURN_IF_ERROR(CheckName(name));
  std::vector<RawEntry> table;
  DMX_RETURN_IF_ERROR(ReadTable(ep, &table));
  for (uint32_t i = 0; i < kEntries; ++i) {
    const uint64_t state = table[i].state;
    if (Field(table[i].name, sizeof table[i].name) != name) continue;
    if (owner != 0 && OwnerTag(i, state) != owner) continue;  // another index of that name
    const DropMark mark{i, Generation(state)};
    if (Dropping(state)) return mark;  // a drop that did not finish
    if (Phase(state) != kReady) continue;
    uint64_t old = 0;
    DMX_RETURN_IF_ERROR(ep.Cas(EntryAddress(i), state, State(Generation(state), kMarked), &old));
    if (old == state || (Generation(old) == Generation(state) && Dropping(old))) return mark;
    return Status::NotFound("index '" + std::string(name) + "' was dropped meanwhile");
  }
  return Missing(ep, name);
}

namespace {

// Takes `self` (the dropping handle's own registration) out of `holders`.
void NotCounting(std::optional<lease::HolderId> self, std::vector<IndexHolder>* holders) {
  if (!self) return;
  std::erase_if(*holders, [&](const IndexHolder& h) { return h.id.slot == self->slot && h.id.epoch == self->epoch; });
}

// The holders of `owner` that refuse a drop: all of them; with `force`, those seen renewing
// while the others' leases are waited out and revoked (LeaseObserver::FenceIfExpired: a holder
// whose slot stood still for its length and a quarter never writes again).
Result<std::vector<IndexHolder>> Refusing(fabric::Endpoint& ep, uint64_t owner, bool force,
                                          std::optional<lease::HolderId> self) {
  auto holders = HoldersOf(ep, owner);
  if (holders.ok()) NotCounting(self, &*holders);
  if (!holders.ok() || !force || holders->empty()) return holders;
  lease::LeaseObserver observer;
  std::unordered_map<uint32_t, uint64_t> first;  // each holder's slot word when first seen
  Backoff backoff(backoff::kPoll, "the leases of an index's holders, to drop it");
  for (;;) {
    std::vector<IndexHolder> live, waiting;
    for (const IndexHolder& h : *holders) {
      auto fenced = observer.FenceIfExpired(ep, h.id);
      if (!fenced.ok()) return fenced.status();
      if (*fenced) continue;
      const auto seen = first.emplace(h.id.slot, h.state_word).first;
      (seen->second != h.state_word ? live : waiting).push_back(h);
    }
    if (!live.empty() || waiting.empty()) return live;
    backoff.Pause();
    holders = HoldersOf(ep, owner);
    if (!holders.ok()) return holders;
    NotCounting(self, &*holders);
  }
}

Status Held(uint32_t slot, const std::vector<IndexHolder>& holders) {
  std::string m = "the index in catalog slot " + std::to_string(slot) + " is open in ";
  for (size_t i = 0; i < holders.size(); ++i) m += (i == 0 ? "" : ", ") + holders[i].ToString();
  return Status::Busy(m + ": close it there first (a dead process's lease is waited out by a forced drop, "
                          "`dmindex indexes --drop NAME --force`); the index stays as it was");
}

}  // namespace

Status Catalog::CommitDrop(fabric::Endpoint& ep, DropMark mark, DropOptions options,
                           std::optional<lease::HolderId> self) {
  if (mark.slot >= kEntries) return Status::InvalidArgument("no catalog slot " + std::to_string(mark.slot));
  uint64_t state = 0;
  DMX_RETURN_IF_ERROR(ep.Read(EntryAddress(mark.slot), &state, 8));
  const uint64_t marked = State(mark.generation, kMarked);
  if (state == State(mark.generation, kReady))  // someone else saw holders and gave the index back
    return Status::Busy("the index in catalog slot " + std::to_string(mark.slot) +
                        " was found held open by another process settling its drop; it stays as it was");
  if (state != marked) return Status::Ok();  // committed, or finished, by someone else
  // The mark is in place: an opener registering from now on sees it and backs off, so the
  // holders read now are all there can be (index_hold.h).
  auto holders = Refusing(ep, OwnerTag(mark.slot, state), options.force, self);
  if (!holders.ok()) return holders.status();
  uint64_t old = 0;
  const uint64_t next = State(mark.generation, holders->empty() ? kCommitted : kReady);
  DMX_RETURN_IF_ERROR(ep.Cas(EntryAddress(mark.slot), marked, next, &old));
  if (old != marked) return CommitDrop(ep, mark, options, self);  // settled by someone else: say how
  return holders->empty() ? Status::Ok() : Held(mark.slot, *holders);
}

Status Catalog::FinishDrop(fabric::Endpoint& ep, DropMark mark, uint16_t memory_nodes) {
  if (mark.slot >= kEntries) return Status::InvalidArgument("no catalog slot " + std::to_string(mark.slot));
  uint64_t state = 0;
  DMX_RETURN_IF_ERROR(ep.Read(EntryAddress(mark.slot), &state, 8));
  if (state != State(mark.generation, kCommitted)) return Status::Ok();  // finished by someone else
  // Every memory node, each call idempotent: a finisher that dies anywhere in this loop
  // leaves the mark, and whoever finishes after it frees what is left and nothing twice.
  if (const uint64_t owner = OwnerTag(mark.slot, state); owner != 0) {
    for (uint16_t node = 0; node < memory_nodes; ++node) {
      fabric::RpcReply request, reply;
      fabric::AppendPod(&request, owner);
      DMX_RETURN_IF_ERROR(ep.Call(node, fabric::rpc_op::kFreeOwnedChunks, request, &reply));
    }
  }
  uint64_t old = 0;
  return ep.Cas(EntryAddress(mark.slot), state, State(mark.generation, kFree), &old);
}

Status Catalog::Settle(fabric::Endpoint& ep, DropMark mark, uint16_t memory_nodes, DropOptions options) {
  DMX_RETURN_IF_ERROR(CommitDrop(ep, mark, options));
  return FinishDrop(ep, mark, memory_nodes);
}

Status Catalog::CheckStillReady(fabric::Endpoint& ep, const CatalogEntry& entry) {
  if (entry.owner == 0) return Status::Ok();  // an entry of before generations: never marked by tag
  uint64_t state = 0;
  DMX_RETURN_IF_ERROR(ep.Read(EntryAddress(entry.slot), &state, 8));
  if (state == State(entry.owner >> 8, kReady)) return Status::Ok();
  return Status::NotFound("index '" + entry.name + "' is being dropped, or was dropped, by another process");
}

Status Catalog::Drop(fabric::Endpoint& ep, std::string_view name, uint16_t memory_nodes, uint64_t owner,
                     DropOptions options) {
  auto mark = MarkDropping(ep, name, owner);
  if (!mark.ok()) return mark.status();
  return Settle(ep, *mark, memory_nodes, options);
}

Status Catalog::Drop(fabric::Fabric& fabric, std::string_view name, uint64_t owner, DropOptions options) {
  auto ep = fabric.Connect();
  if (!ep.ok()) return ep.status();
  return Drop(**ep, name, fabric.memory_nodes(), owner, options);
}

Status Catalog::PrepareDrop(fabric::Fabric& fabric, std::string_view name, uint64_t owner,
                            DropOptions options, std::optional<lease::HolderId> self) {
  auto ep = fabric.Connect();
  if (!ep.ok()) return ep.status();
  auto mark = MarkDropping(**ep, name, owner);
  if (!mark.ok()) return mark.status();
  return CommitDrop(**ep, *mark, options, self);
}

KeySchema KeySchema::Of(const IndexOptions& options) {
  KeySchema s;
  s.format = options.key_format;
  s.max_value_bytes = options.max_value_bytes;
  if (s.format == KeyFormat::kBytes) {
    s.max_key_bytes = options.max_key_bytes;
    s.inline_value_bytes = options.inline_value_bytes;
  }
  return s;
}

std::string KeySchema::ToString() const {
  return (format == KeyFormat::kU64 ? std::string("u64 keys")
                                    : "byte keys of up to " + std::to_string(max_key_bytes) + " bytes") +
         ", values inline up to " + std::to_string(inline_value_bytes) + " of at most " +
         std::to_string(max_value_bytes) + " bytes";
}

Result<CatalogEntry> Catalog::OpenOrCreate(fabric::Endpoint& ep, std::string_view name,
                                           const CatalogSpec& spec, bool* created,
                                           bool create_if_missing) {
  const std::string_view design = spec.design;
  DMX_RETURN_IF_ERROR(CheckName(name));
  if (design.empty() || design.size() > kMaxDesignBytes)
    return Status::InvalidArgument("design name must have 1.." + std::to_string(kMaxDesignBytes) + " bytes");
  *created = false;
  // Another creator's entry is a few round trips from ready; one that stays half-created
  // (retry_limits::kCatalogClaim) belongs to a process that died.
  RetryBudget budget(retry_limits::kCatalogClaim, "open or create index");
  Backoff backoff(backoff::kPoll, "a catalog entry another process creates");
  const auto look_again = [&] {
    if (!budget.Spend()) return false;
    backoff.Pause();
    return true;
  };
  const std::string quoted = std::string("'").append(name).append("'");
  std::vector<RawEntry> table;
  for (;;) {
    DMX_RETURN_IF_ERROR(ReadTable(ep, &table));
    bool pending = false, dropped = false;
    int first_free = -1;
    std::vector<DropMark> dropping;
    for (uint32_t i = 0; i < kEntries && !dropped; ++i) {
      const RawEntry& raw = table[i];
      const uint64_t phase = Phase(raw.state);
      if (phase == kClaimed) pending = true;
      if (phase == kFree && first_free < 0) first_free = static_cast<int>(i);
      const DropMark mark{i, Generation(raw.state)};
      if (Dropping(raw.state)) dropping.push_back(mark);
      if (Dropping(raw.state) && Field(raw.name, sizeof raw.name) == name) {
        // A drop of this name that its dropper did not finish: finish it, then the name is
        // free; or, if the index turns out held open (Busy), it is ready again: open it.
        if (Status s = Settle(ep, mark, spec.memory_nodes); !s.ok() && !s.IsBusy()) return s;
        dropped = true;
        break;
      }
      if (phase != kReady || Field(raw.name, sizeof raw.name) != name) continue;
      auto entry = ToEntry(raw, i);
      if (!entry.ok()) return entry;
      if (Status gone = CheckPools(ep, raw, name); !gone.ok()) {
        if (!gone.IsNotFound() || !create_if_missing) return gone;
        // Its memory is gone with a pool: drop it (what it had in the other pools goes back)
        // and create the index anew (racing creators each try the marks; every one may finish
        // the drop, and the claim below is shared). Its holders are not waited for: a handle of
        // an index whose pool went away fails every operation (its fabric gave the pool up,
        // docs/FAILURES.md), so the drop commits at once.
        uint64_t old = 0;
        DMX_RETURN_IF_ERROR(ep.Cas(EntryAddress(i), raw.state, State(Generation(raw.state), kMarked), &old));
        DMX_RETURN_IF_ERROR(ep.Cas(EntryAddress(i), State(Generation(raw.state), kMarked),
                                   State(Generation(raw.state), kCommitted), &old));
        DMX_RETURN_IF_ERROR(FinishDrop(ep, mark, spec.memory_nodes));
        dropped = true;
        break;
      }
      if (entry->design != design || entry->node_bytes != spec.node_bytes || !(entry->schema == spec.schema))
        return Status::InvalidArgument("index '" + std::string(name) + "' exists as design " +
                                       entry->design + " with " + std::to_string(entry->node_bytes) +
                                       "-byte nodes and " + entry->schema.ToString() +
                                       "; opened as " + spec.design + " with " +
                                       std::to_string(spec.node_bytes) + "-byte nodes and " +
                                       spec.schema.ToString());
      return entry;
    }
    if (dropped) continue;  // read the table again, with the stale entry gone
    // An entry being created may be ours under another creator: wait for it to be ready.
    // Slots are claimed strictly first-free-first, so racing creators contend for one slot.
    if (pending) {
      if (!look_again()) return budget.Exhausted(quoted);
      continue;
    }
    if (!create_if_missing) return Missing(ep, name);
    if (first_free < 0 && !dropping.empty()) {  // a full catalog: finish drops others left
      bool settled = false;  // a held one goes back to ready: no room made
      for (const DropMark& mark : dropping) {
        Status s = Settle(ep, mark, spec.memory_nodes);
        if (!s.ok() && !s.IsBusy()) return s;
        settled = settled || s.ok();
      }
      if (settled) continue;
      return Status::OutOfSpace("catalog full: " + std::to_string(kEntries) + " indexes (some being dropped, "
                                "held open by other processes)");
    }
    if (first_free < 0) return Status::OutOfSpace("catalog full: " + std::to_string(kEntries) + " indexes");
    const uint32_t slot = static_cast<uint32_t>(first_free);
    const uint64_t free_state = table[slot].state;
    const uint64_t claimed = State(Generation(free_state) + 1, kClaimed);
    uint64_t old = 0;
    DMX_RETURN_IF_ERROR(ep.Cas(EntryAddress(slot), free_state, claimed, &old));
    if (old != free_state) {  // lost the race for this slot: look again
      if (!look_again()) return budget.Exhausted(quoted);
      continue;
    }
    RawEntry raw{};
    raw.state = claimed;
    std::memcpy(raw.name, name.data(), name.size());
    std::memcpy(raw.design, design.data(), design.size());
    raw.node_bytes = spec.node_bytes;
    raw.key_format = static_cast<uint32_t>(spec.schema.format);
    raw.max_key_bytes = spec.schema.max_key_bytes;
    raw.inline_value_bytes = spec.schema.inline_value_bytes;
    raw.max_value_bytes = spec.schema.max_value_bytes;
    raw.format = kFormatVersion;
    raw.magic = kMagic;
    DMX_RETURN_IF_ERROR(RecordPools(ep, spec.memory_nodes, &raw));
    uint64_t ready = State(Generation(claimed), kReady);
    GlobalAddress base = EntryAddress(slot);
    // Fields first, then the state word: a reader that sees kReady sees the fields.
    DMX_RETURN_IF_ERROR(ep.Post({fabric::Verb::Write(base + 8, reinterpret_cast<char*>(&raw) + 8,
                                                     sizeof raw - 8),
                                 fabric::Verb::Write(base, &ready, 8)},
                                fabric::Ordering::kInOrder));
    *created = true;
    raw.state = ready;
    return ToEntry(raw, slot);
  }
}

}  // namespace dmindex::alloc
