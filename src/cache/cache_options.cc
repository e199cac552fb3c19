#include "cache/cache_options.h"

#include "cache/buffer_frame.h"

namespace dmindex::cache {

CacheStats& CacheStats::operator+=(const CacheStats& o) {
  hits += o.hits;
  misses += o.misses;
  admitted += o.admitted;
  bypassed += o.bypassed;
  cooled += o.cooled;
  evicted += o.evicted;
  write_backs += o.write_backs;
  frames += o.frames;
  frames_used += o.frames_used;
  return *this;
}

std::string CacheStats::ToString() const {
  return "hits=" + std::to_string(hits) + " misses=" + std::to_string(misses) +
         " admitted=" + std::to_string(admitted) + " bypassed=" + std::to_string(bypassed) +
         " cooled=" + std::to_string(cooled) + " evicted=" + std::to_string(evicted) +
         " write_backs=" + std::to_string(write_backs) + " frames=" + std::to_string(frames_used) +
         "/" + std::to_string(frames);
}

const char* FrameStateName(FrameState s) {
  switch (s) {
    case FrameState::kFree: return "free";
    case FrameState::kLoading: return "loading";
    case FrameState::kHot: return "hot";
    case FrameState::kCooling: return "cooling";
    case FrameState::kTransient: return "transient";
  }
  return "?";
}

}  // namespace dmindex::cache
