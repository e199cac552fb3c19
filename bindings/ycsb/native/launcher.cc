// dmindex-ycsb: YCSB's client (site.ycsb.Client of YCSB 0.17.0) on dmindex, as YCSB's own
// bin/ycsb runs it for a binding:
//
//   dmindex-ycsb --classpath CP load|run [YCSB CLIENT ARGUMENTS]...
//
// `load` is the client's -load, `run` its -t, with -db site.ycsb.db.dmindex.DmindexClient;
// the rest (-P workload, -p name=value, -threads, -target, -s, ...) goes to the client as
// given. CP holds YCSB's core jar with its dependencies and the binding's jar
// (scripts/ycsb.sh builds it). The launcher starts the JVM itself (JNI's invocation API) and
// registers the binding's natives from this executable, so dmindex is linked here statically
// and needs no shared library. docs/YCSB_BINDING.md.
#include <jni.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "jni_natives.h"

namespace {

int Usage(const char* why) {
  std::fprintf(stderr,
               "dmindex-ycsb: %s\nusage: dmindex-ycsb --classpath CP [--jvm OPTION]... load|run "
               "[YCSB client arguments: -P FILE, -p NAME=VALUE, -threads N, -target OPS, -s, ...]\n",
               why);
  return 2;
}

// Runs site.ycsb.Client.main(arguments); returns only if it did not call System.exit.
int RunClient(JNIEnv* env, const std::vector<std::string>& arguments) {
  jclass client = env->FindClass("site/ycsb/Client");
  if (client == nullptr) {
    env->ExceptionDescribe();
    std::fprintf(stderr, "dmindex-ycsb: site.ycsb.Client not found: is YCSB's core jar on the class path?\n");
    return 1;
  }
  jmethodID main = env->GetStaticMethodID(client, "main", "([Ljava/lang/String;)V");
  jobjectArray args = env->NewObjectArray(static_cast<jsize>(arguments.size()), env->FindClass("java/lang/String"), nullptr);
  if (main == nullptr || args == nullptr) {
    env->ExceptionDescribe();
    return 1;
  }
  for (size_t i = 0; i < arguments.size(); ++i)
    env->SetObjectArrayElement(args, static_cast<jsize>(i), env->NewStringUTF(arguments[i].c_str()));
  env->CallStaticVoidMethod(client, main, args);
  if (env->ExceptionCheck()) {
    env->ExceptionDescribe();
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string classpath;
  if (const char* cp = std::getenv("DMINDEX_YCSB_CLASSPATH")) classpath = cp;
  std::vector<std::string> jvm_options;
  int i = 1;
  for (; i < argc && std::strncmp(argv[i], "--", 2) == 0; ++i) {
    if (i + 1 >= argc) return Usage("a flag without its value");
    if (std::strcmp(argv[i], "--classpath") == 0) {
      classpath = argv[++i];
    } else if (std::strcmp(argv[i], "--jvm") == 0) {
      jvm_options.emplace_back(argv[++i]);
    } else {
      return Usage((std::string("unknown flag ") + argv[i]).c_str());
    }
  }
  if (classpath.empty()) return Usage("no class path (--classpath or DMINDEX_YCSB_CLASSPATH)");
  if (i >= argc || (std::strcmp(argv[i], "load") != 0 && std::strcmp(argv[i], "run") != 0))
    return Usage("expected load or run");
  std::vector<std::string> arguments = {std::strcmp(argv[i], "load") == 0 ? "-load" : "-t", "-db",
                                        "site.ycsb.db.dmindex.DmindexClient"};
  for (++i; i < argc; ++i) arguments.emplace_back(argv[i]);

  jvm_options.insert(jvm_options.begin(), "-Djava.class.path=" + classpath);
  std::vector<JavaVMOption> options(jvm_options.size());
  for (size_t o = 0; o < jvm_options.size(); ++o) options[o].optionString = jvm_options[o].data();
  JavaVMInitArgs init{};
  init.version = JNI_VERSION_10;
  init.nOptions = static_cast<jint>(options.size());
  init.options = options.data();
  init.ignoreUnrecognized = JNI_FALSE;
  JavaVM* jvm = nullptr;
  JNIEnv* env = nullptr;
  if (JNI_CreateJavaVM(&jvm, reinterpret_cast<void**>(&env), &init) != JNI_OK) {
    std::fprintf(stderr, "dmindex-ycsb: the JVM did not start (its options: see above)\n");
    return 1;
  }
  const std::string not_registered = dmindex_ycsb::RegisterNatives(env);
  if (!not_registered.empty()) {
    std::fprintf(stderr, "dmindex-ycsb: %s\n", not_registered.c_str());
    return 1;
  }
  const int failed = RunClient(env, arguments);  // YCSB's client ends the process with System.exit
  jvm->DestroyJavaVM();
  return failed;
}
