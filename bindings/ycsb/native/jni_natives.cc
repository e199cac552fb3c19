// The natives of site.ycsb.db.dmindex.DmindexNative: each a call of dmindex's C API
// (include/dmindex/c.h) on Java byte arrays. A failed call throws DmindexException(code,
// message); NOT_FOUND is an answer (null or false), not an exception.
#include "jni_natives.h"

#include <dmindex/c.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dmindex_ycsb {
namespace {

jclass exception_class = nullptr;      // global reference, set by RegisterNatives
jmethodID exception_constructor = nullptr;

// A status object per Java thread: calls fill it only when they fail to report the message.
dmindex_status_t* ThreadStatus() {
  thread_local std::unique_ptr<dmindex_status_t, void (*)(dmindex_status_t*)> status(dmindex_status_create(),
                                                                                     dmindex_status_destroy);
  return status.get();
}

// Throws DmindexException for a code that is not OK; returns whether the call succeeded.
bool Check(JNIEnv* env, dmindex_code_t code) {
  if (code == DMINDEX_OK) return true;
  if (env->ExceptionCheck()) return false;  // a Java exception is already pending
  jstring message = env->NewStringUTF(dmindex_status_message(ThreadStatus()));
  if (message == nullptr) return false;  // OutOfMemoryError pending
  auto e = static_cast<jthrowable>(env->NewObject(exception_class, exception_constructor, jint{code}, message));
  if (e != nullptr) env->Throw(e);
  return false;
}

// Java's bytes, borrowed for one call (copied: Get/ReleaseByteArrayElements may copy anyway).
class Bytes {
 public:
  Bytes(JNIEnv* env, jbyteArray array) {
    if (array == nullptr) return;
    bytes_.resize(static_cast<size_t>(env->GetArrayLength(array)));
    env->GetByteArrayRegion(array, 0, static_cast<jsize>(bytes_.size()), reinterpret_cast<jbyte*>(bytes_.data()));
  }
  const char* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }

 private:
  std::vector<char> bytes_;
};

jbyteArray ToJava(JNIEnv* env, const char* bytes, size_t length) {
  jbyteArray array = env->NewByteArray(static_cast<jsize>(length));
  if (array != nullptr) env->SetByteArrayRegion(array, 0, static_cast<jsize>(length), reinterpret_cast<const jbyte*>(bytes));
  return array;
}

std::string ToString(JNIEnv* env, jstring s) {
  if (s == nullptr) return {};
  const char* chars = env->GetStringUTFChars(s, nullptr);
  std::string out = chars != nullptr ? chars : "";
  if (chars != nullptr) env->ReleaseStringUTFChars(s, chars);
  return out;
}

std::vector<std::string> Split(const std::string& list, char separator) {
  std::vector<std::string> items;
  size_t from = 0;
  while (from <= list.size()) {
    size_t to = list.find(separator, from);
    if (to == std::string::npos) to = list.size();
    if (to > from) items.push_back(list.substr(from, to - from));
    from = to + 1;
  }
  return items;
}

template <typename T>
T* Handle(jlong h) {
  return reinterpret_cast<T*>(static_cast<intptr_t>(h));
}

jlong ToJava(const void* handle) { return static_cast<jlong>(reinterpret_cast<intptr_t>(handle)); }

jlong OpenCluster(JNIEnv* env, jclass, jstring memservers, jstring transport, jstring key_file) {
  dmindex_cluster_t* cluster = nullptr;
  const std::vector<std::string> addresses = Split(ToString(env, memservers), ',');
  dmindex_code_t code;
  if (addresses.empty()) {
    code = dmindex_cluster_open_embedded(nullptr, &cluster, ThreadStatus());
  } else {
    std::vector<const char*> list;
    for (const std::string& a : addresses) list.push_back(a.c_str());
    const std::string t = ToString(env, transport), key = ToString(env, key_file);
    code = dmindex_cluster_connect(list.data(), list.size(), t.c_str(), key.c_str(), 0, 0, &cluster, ThreadStatus());
  }
  return Check(env, code) ? ToJava(cluster) : 0;
}

void DestroyCluster(JNIEnv*, jclass, jlong cluster) { dmindex_cluster_destroy(Handle<dmindex_cluster_t>(cluster)); }

jlongArray ClusterCounters(JNIEnv* env, jclass, jlong cluster) {
  static constexpr const char* kNames[] = {"dmindex.fabric.reads", "dmindex.fabric.writes",
                                           "dmindex.fabric.atomics", "dmindex.fabric.rpcs",
                                           "dmindex.fabric.round-trips", "dmindex.fabric.bytes"};
  jlong values[6] = {};
  for (size_t i = 0; i < 6; ++i) {
    uint64_t v = 0;
    if (!Check(env, dmindex_cluster_property(Handle<dmindex_cluster_t>(cluster), kNames[i], &v, ThreadStatus())))
      return nullptr;
    values[i] = static_cast<jlong>(v);
  }
  jlongArray out = env->NewLongArray(6);
  if (out != nullptr) env->SetLongArrayRegion(out, 0, 6, values);
  return out;
}

// Applies names[i] = values[i] with `set` (dmindex_options_set or _set_knob).
bool SetAll(JNIEnv* env, dmindex_options_t* options, jobjectArray names, jobjectArray values,
            dmindex_code_t (*set)(dmindex_options_t*, const char*, const char*, dmindex_status_t*)) {
  const jsize n = names == nullptr ? 0 : env->GetArrayLength(names);
  for (jsize i = 0; i < n; ++i) {
    const std::string name = ToString(env, static_cast<jstring>(env->GetObjectArrayElement(names, i)));
    const std::string value = ToString(env, static_cast<jstring>(env->GetObjectArrayElement(values, i)));
    if (!Check(env, set(options, name.c_str(), value.c_str(), ThreadStatus()))) return false;
  }
  return true;
}

jlong OpenIndex(JNIEnv* env, jclass, jlong cluster, jobjectArray option_names, jobjectArray option_values,
                jobjectArray knob_names, jobjectArray knob_values) {
  std::unique_ptr<dmindex_options_t, void (*)(dmindex_options_t*)> options(dmindex_options_create(),
                                                                           dmindex_options_destroy);
  if (!SetAll(env, options.get(), option_names, option_values, dmindex_options_set) ||
      !SetAll(env, options.get(), knob_names, knob_values, dmindex_options_set_knob))
    return 0;
  dmindex_index_t* index = nullptr;
  const dmindex_code_t code =
      dmindex_index_open(options.get(), Handle<dmindex_cluster_t>(cluster), &index, ThreadStatus());
  return Check(env, code) ? ToJava(index) : 0;
}

void CloseIndex(JNIEnv* env, jclass, jlong index) {
  const dmindex_code_t code = dmindex_index_close(Handle<dmindex_index_t>(index), ThreadStatus());
  dmindex_index_destroy(Handle<dmindex_index_t>(index));
  Check(env, code);
}

jlong OpenSession(JNIEnv* env, jclass, jlong index) {
  dmindex_session_t* session = nullptr;
  const dmindex_code_t code = dmindex_session_open(Handle<dmindex_index_t>(index), 0, &session, ThreadStatus());
  return Check(env, code) ? ToJava(session) : 0;
}

void CloseSession(JNIEnv* env, jclass, jlong session) {
  const dmindex_code_t code = dmindex_session_close(Handle<dmindex_session_t>(session), ThreadStatus());
  dmindex_session_destroy(Handle<dmindex_session_t>(session));
  Check(env, code);
}

jbyteArray Get(JNIEnv* env, jclass, jlong session, jbyteArray key) {
  const Bytes k(env, key);
  char* value = nullptr;
  size_t length = 0;
  const dmindex_code_t code =
      dmindex_get(Handle<dmindex_session_t>(session), k.data(), k.size(), &value, &length, ThreadStatus());
  if (code == DMINDEX_NOT_FOUND || !Check(env, code)) return nullptr;
  jbyteArray out = ToJava(env, value, length);
  dmindex_free(value);
  return out;
}

void Put(JNIEnv* env, jclass, jlong session, jbyteArray key, jbyteArray value) {
  const Bytes k(env, key), v(env, value);
  Check(env, dmindex_put(Handle<dmindex_session_t>(session), k.data(), k.size(), v.data(), v.size(), ThreadStatus()));
}

jboolean Delete(JNIEnv* env, jclass, jlong session, jbyteArray key) {
  const Bytes k(env, key);
  const dmindex_code_t code = dmindex_delete(Handle<dmindex_session_t>(session), k.data(), k.size(), ThreadStatus());
  return code == DMINDEX_NOT_FOUND || !Check(env, code) ? JNI_FALSE : JNI_TRUE;
}

jobjectArray Scan(JNIEnv* env, jclass, jlong session, jbyteArray start, jint count) {
  const Bytes s(env, start);
  dmindex_pairs_t* pairs = nullptr;
  const dmindex_code_t code = dmindex_scan(Handle<dmindex_session_t>(session), s.data(), s.size(),
                                           count < 0 ? 0 : static_cast<size_t>(count), &pairs, ThreadStatus());
  std::unique_ptr<dmindex_pairs_t, void (*)(dmindex_pairs_t*)> owned(pairs, dmindex_pairs_destroy);
  if (!Check(env, code)) return nullptr;
  const size_t n = dmindex_pairs_count(pairs);
  jclass byte_array = env->FindClass("[B");
  jobjectArray out = env->NewObjectArray(static_cast<jsize>(2 * n), byte_array, nullptr);
  for (size_t i = 0; out != nullptr && i < n; ++i) {
    size_t kn = 0, vn = 0;
    const char* k = dmindex_pairs_key(pairs, i, &kn);
    const char* v = dmindex_pairs_value(pairs, i, &vn);
    jbyteArray jk = ToJava(env, k, kn), jv = ToJava(env, v, vn);
    if (jk == nullptr || jv == nullptr) return nullptr;  // OutOfMemoryError pending
    env->SetObjectArrayElement(out, static_cast<jsize>(2 * i), jk);
    env->SetObjectArrayElement(out, static_cast<jsize>(2 * i + 1), jv);
    env->DeleteLocalRef(jk);
    env->DeleteLocalRef(jv);
  }
  return out;
}

}  // namespace

std::string RegisterNatives(JNIEnv* env) {
  constexpr const char* kNative = "site/ycsb/db/dmindex/DmindexNative";
  constexpr const char* kException = "site/ycsb/db/dmindex/DmindexException";
  jclass native = env->FindClass(kNative);
  jclass exception = env->FindClass(kException);
  if (native == nullptr || exception == nullptr) {
    env->ExceptionClear();
    return std::string("class ") + (native == nullptr ? kNative : kException) +
           " not found: is the binding's jar (bindings/ycsb, scripts/install-ycsb.sh) on the class path?";
  }
  exception_class = static_cast<jclass>(env->NewGlobalRef(exception));
  exception_constructor = env->GetMethodID(exception, "<init>", "(ILjava/lang/String;)V");
  const JNINativeMethod methods[] = {
      {const_cast<char*>("openCluster"), const_cast<char*>("(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)J"),
       reinterpret_cast<void*>(OpenCluster)},
      {const_cast<char*>("destroyCluster"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(DestroyCluster)},
      {const_cast<char*>("clusterCounters"), const_cast<char*>("(J)[J"), reinterpret_cast<void*>(ClusterCounters)},
      {const_cast<char*>("openIndex"),
       const_cast<char*>("(J[Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/String;)J"),
       reinterpret_cast<void*>(OpenIndex)},
      {const_cast<char*>("closeIndex"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(CloseIndex)},
      {const_cast<char*>("openSession"), const_cast<char*>("(J)J"), reinterpret_cast<void*>(OpenSession)},
      {const_cast<char*>("closeSession"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(CloseSession)},
      {const_cast<char*>("get"), const_cast<char*>("(J[B)[B"), reinterpret_cast<void*>(Get)},
      {const_cast<char*>("put"), const_cast<char*>("(J[B[B)V"), reinterpret_cast<void*>(Put)},
      {const_cast<char*>("delete"), const_cast<char*>("(J[B)Z"), reinterpret_cast<void*>(Delete)},
      {const_cast<char*>("scan"), const_cast<char*>("(J[BI)[[B"), reinterpret_cast<void*>(Scan)},
  };
  if (exception_constructor == nullptr ||
      env->RegisterNatives(native, methods, sizeof methods / sizeof methods[0]) != JNI_OK) {
    env->ExceptionDescribe();
    return "registering the natives of site.ycsb.db.dmindex.DmindexNative failed";
  }
  return {};
}

}  // namespace dmindex_ycsb
