// The JNI natives of the YCSB binding's DmindexNative class, over dmindex's C API.
#pragma once

#include <jni.h>

#include <string>

namespace dmindex_ycsb {

// Registers site.ycsb.db.dmindex.DmindexNative's natives on the JVM of `env`; empty on
// success, else why not (the binding's classes not on the class path, ...).
std::string RegisterNatives(JNIEnv* env);

}  // namespace dmindex_ycsb
