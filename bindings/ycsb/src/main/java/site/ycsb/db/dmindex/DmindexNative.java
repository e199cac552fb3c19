package site.ycsb.db.dmindex;

/**
 * The C API calls the binding makes (include/dmindex/c.h), as JNI natives. Their code is in
 * the dmindex-ycsb launcher (bindings/ycsb/native/jni_natives.cc), which registers them when
 * it starts the JVM. Handles are the C API's pointers as longs; a failed call throws
 * {@link DmindexException} carrying the C API's code and message.
 */
final class DmindexNative {
  private DmindexNative() {}

  /** An embedded cluster (memservers null or empty) or the memory servers "HOST:PORT,...". */
  static native long openCluster(String memservers, String transport, String clusterKeyFile);

  static native void destroyCluster(long cluster);

  /** The cluster connection's verbs so far: reads, writes, atomics, RPCs, round trips, bytes. */
  static native long[] clusterCounters(long cluster);

  /** IndexOptions fields (dmindex_options_set) and design knobs by name. */
  static native long openIndex(long cluster, String[] optionNames, String[] optionValues, String[] knobNames,
                               String[] knobValues);

  /** Closes the index (reporting its errors) and frees the handle. */
  static native void closeIndex(long index);

  static native long openSession(long index);

  static native void closeSession(long session);

  /** The value, or null if the key is absent. */
  static native byte[] get(long session, byte[] key);

  /** Inserts or overwrites. */
  static native void put(long session, byte[] key, byte[] value);

  /** False if the key is absent. */
  static native boolean delete(long session, byte[] key);

  /** Up to count pairs from start on: key 0, value 0, key 1, value 1, ... */
  static native byte[][] scan(long session, byte[] start, int count);
}
