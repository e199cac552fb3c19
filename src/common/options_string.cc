// IndexOptions from text: the field table (option_fields.h) and ParseIndexOptions.
#include <utility>

#include "common/option_fields.h"
#include "common/parse_values.h"

namespace dmindex {
namespace {

struct OptionField {
  const char* name;
  Status (*set)(const std::string& value, IndexOptions* o);
};

template <typename T>
Status SetCount(const std::string& value, uint64_t min, uint64_t max, T* field) {
  auto n = ParseCount(value, min, max);
  if (!n.ok()) return n.status();
  *field = static_cast<T>(*n);
  return Status::Ok();
}

Status Refuse(const std::string& v, const char* expected) {
  return Status::InvalidArgument(std::string("'").append(v).append("': expected ").append(expected));
}

const OptionField kOptionFields[] = {
    {"design", [](const std::string& v, IndexOptions* o) { o->design = v; return Status::Ok(); }},
    {"name", [](const std::string& v, IndexOptions* o) { o->name = v; return Status::Ok(); }},
    {"create_if_missing",
     [](const std::string& v, IndexOptions* o) {
       if (v != "true" && v != "false") return Refuse(v, "true or false");
       o->create_if_missing = v == "true";
       return Status::Ok();
     }},
    {"directory", [](const std::string& v, IndexOptions* o) { o->directory = v; return Status::Ok(); }},
    {"key_format",
     [](const std::string& v, IndexOptions* o) {
       if (v != "bytes" && v != "u64") return Refuse(v, "bytes or u64");
       o->key_format = v == "bytes" ? KeyFormat::kBytes : KeyFormat::kU64;
       return Status::Ok();
     }},
    {"max_key_bytes", [](const std::string& v, IndexOptions* o) { return SetCount(v, 1, kMaxKeyBytes, &o->max_key_bytes); }},
    {"inline_value_bytes", [](const std::string& v, IndexOptions* o) { return SetCount(v, 0, UINT32_MAX, &o->inline_value_bytes); }},
    {"max_value_bytes", [](const std::string& v, IndexOptions* o) { return SetCount(v, 0, UINT32_MAX, &o->max_value_bytes); }},
    {"node_bytes", [](const std::string& v, IndexOptions* o) { return SetCount(v, 64, kMaxNodeBytes, &o->node_bytes); }},
    {"cache_bytes", [](const std::string& v, IndexOptions* o) { return SetCount(v, 0, UINT64_MAX, &o->cache_bytes); }},
    {"compute_nodes", [](const std::string& v, IndexOptions* o) { return SetCount(v, 1, UINT32_MAX, &o->compute_nodes); }},
    {"bulk_fill",
     [](const std::string& v, IndexOptions* o) {
       auto f = ParseReal(v, RealRange{0, 1, true, false});
       if (!f.ok()) return f.status();
       o->bulk_fill = *f;
       return Status::Ok();
     }},
};

}  // namespace

Status SetIndexOptionField(IndexOptions* o, std::string_view name, std::string_view value) {
  for (const OptionField& f : kOptionFields) {
    if (name != f.name) continue;
    IndexOptions changed = *o;  // a refused value leaves the options as they were
    const Status s = f.set(std::string(value), &changed);
    if (!s.ok()) return Status::InvalidArgument(std::string("option ").append(name).append(": ").append(s.message()));
    *o = std::move(changed);
    return Status::Ok();
  }
  return Status::NotFound();
}

std::vector<std::string> IndexOptionFieldNames() {
  std::vector<std::string> names;
  for (const OptionField& f : kOptionFields) names.emplace_back(f.name);
  return names;
}

Status ParseIndexOptions(std::string_view text, IndexOptions* options) {
  IndexOptions o = *options;
  while (!text.empty()) {
    const size_t semi = text.find(';');
    const std::string_view item = text.substr(0, semi);
    text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
    if (item.empty()) continue;  // "a=1;;b=2" and a trailing ';'
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return Status::InvalidArgument(std::string("options: '").append(item).append("' is not name=value"));
    const std::string_view name = item.substr(0, eq), value = item.substr(eq + 1);
    Status s = SetIndexOptionField(&o, name, value);
    if (s.IsNotFound()) o.knobs[std::string(name)] = std::string(value);  // checked by the design
    else if (!s.ok()) return s;
  }
  *options = std::move(o);
  return Status::Ok();
}

}  // namespace dmindex
