#include "tiering/cold_store_options.h"

#include "common/knobs.h"
#include "tiering/lmdb_store.h"
#include "tiering/mem_store.h"
#include "tiering/rocksdb_store.h"

namespace dmindex::tiering {

Status ApplyColdStoreKnob(std::string_view knob, std::string_view value, ColdStoreOptions* o, bool* handled) {
  *handled = true;
  uint64_t n = 0;
  if (knob == "y_dir") {
    if (value.empty()) return BadKnob(knob, value, "a directory");
    o->parent_dir = std::string(value);
  } else if (knob == "y_keep") {
    return KnobSwitch(knob, value, &o->keep);
  } else if (knob == "y_direct") {
    return KnobSwitch(knob, value, &o->direct_io);
  } else if (knob == "y_meta_cached") {
    return KnobSwitch(knob, value, &o->meta_in_cache);
  } else if (knob == "y_buffer_mb") {
    DMX_RETURN_IF_ERROR(KnobCount(knob, value, 1, 1u << 20, &n));
    o->write_buffer_bytes = n << 20;
  } else if (knob == "y_cache_mb") {
    DMX_RETURN_IF_ERROR(KnobCount(knob, value, 0, 1u << 20, &n));
    o->block_cache_bytes = n << 20;
  } else if (knob == "y_row_cache_mb") {
    DMX_RETURN_IF_ERROR(KnobCount(knob, value, 0, 1u << 20, &n));
    o->row_cache_bytes = n << 20;
  } else if (knob == "y_page_kb") {
    DMX_RETURN_IF_ERROR(KnobCount(knob, value, 1, 1024, &n));
    o->page_bytes = static_cast<uint32_t>(n << 10);
  } else if (knob == "y_block_kb") {
    DMX_RETURN_IF_ERROR(KnobCount(knob, value, 1, 1024, &n));
    o->block_bytes = static_cast<uint32_t>(n << 10);
  } else {
    *handled = false;
  }
  return Status::Ok();
}

Result<std::unique_ptr<ColdStore>> OpenColdStore(const ColdStoreOptions& options) {
  if (options.kind == "mem") return std::unique_ptr<ColdStore>(std::make_unique<MemStore>(options.mem_faults));
  if (options.kind == "rocksdb") return RocksDbStore::Open(options);
  if (options.kind == "lmdb") return LmdbStore::Open(options);
  return Status::InvalidArgument("unknown cold store '" + options.kind + "' (known: rocksdb, lmdb, mem)");
}

}  // namespace dmindex::tiering
