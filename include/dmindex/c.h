/* dmindex's C API: the C++ API (index.h, cluster.h, iterator.h) behind opaque handles, for C
 * programs and for other languages' foreign-function layers (the YCSB binding's JNI code).
 * C11; link dmindex::c (CMake), or `pkg-config --cflags --libs dmindex` and the C++ runtime
 * (-lstdc++ -lm: the libraries are static C++). docs/C_API.md.
 *
 * Errors. Every call that can fail returns a dmindex_code_t (DMINDEX_OK = 0) and takes a last
 * argument `dmindex_status_t* status`: NULL, or a status object the caller created once and
 * reuses, which the call fills with the code and a message ("NotFound: ...").  The code alone
 * answers the common question (found? OK?) with no allocation; the message is there when it
 * is wanted, kept in the caller's object (RocksDB's errptr gives a string to free and no code).
 * No C++ exception crosses this API: one raised inside becomes DMINDEX_CORRUPTION (or
 * DMINDEX_OUT_OF_SPACE for exhausted memory) with its text.
 *
 * Handles. Clusters, indexes, sessions and iterators are opaque pointers. A NULL handle is
 * DMINDEX_INVALID_ARGUMENT. Closing (dmindex_index_close, dmindex_session_close) ends the
 * object's work but keeps the handle: any later call on it is DMINDEX_INVALID_ARGUMENT saying
 * it was closed. dmindex_*_destroy frees a handle (closing it first if needed); a destroyed
 * handle must not be used again, as with free(). An index keeps its cluster alive, a session its
 * index, an iterator its session, so handles may be destroyed in any order.
 * Threads: as in C++, a session and its iterators belong to one thread at a time; clusters and
 * indexes may be shared by threads.
 *
 * Bytes. Keys and values are (pointer, length) byte strings; nothing needs a NUL. Bytes the
 * API returns to keep (values, scan results, name lists) are allocated by it and given back
 * with dmindex_free / dmindex_pairs_destroy.
 */
#ifndef DMINDEX_C_H_
#define DMINDEX_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The codes of dmindex::Status::Code (status.h), with the same values. */
typedef enum dmindex_code_t {
  DMINDEX_OK = 0,
  DMINDEX_NOT_FOUND = 1,
  DMINDEX_INVALID_ARGUMENT = 2,
  DMINDEX_UNAVAILABLE = 3,
  DMINDEX_OUT_OF_SPACE = 4,
  DMINDEX_CORRUPTION = 5,
  DMINDEX_IO_ERROR = 7,
  DMINDEX_NOT_SUPPORTED = 8,
  DMINDEX_ABORTED = 9,
  DMINDEX_NOT_OWNER = 10,
  DMINDEX_BUSY = 11
} dmindex_code_t;

typedef struct dmindex_status_t dmindex_status_t;
typedef struct dmindex_options_t dmindex_options_t;
typedef struct dmindex_cluster_t dmindex_cluster_t;
typedef struct dmindex_index_t dmindex_index_t;
typedef struct dmindex_session_t dmindex_session_t;
typedef struct dmindex_iterator_t dmindex_iterator_t;
typedef struct dmindex_pairs_t dmindex_pairs_t;

/* --- Status --- */

/* A status object to pass to calls (NULL if out of memory); OK until a call fills it. */
dmindex_status_t* dmindex_status_create(void);
void dmindex_status_destroy(dmindex_status_t* status);
/* The last call's code and message ("OK", or "NotFound: ..."); valid until the next call that
 * fills this status. A NULL status reads as DMINDEX_INVALID_ARGUMENT / a message saying so. */
dmindex_code_t dmindex_status_code(const dmindex_status_t* status);
const char* dmindex_status_message(const dmindex_status_t* status);
/* "OK", "NotFound", ... for a code; "Unknown" for a value that is not one. */
const char* dmindex_code_name(dmindex_code_t code);

/* Frees bytes the API allocated (values, name lists). NULL is a no-op. */
void dmindex_free(void* bytes);

/* The u64 key format's keys: the 8-byte big-endian encoding of an integer (U64Key). */
void dmindex_u64_encode(uint64_t value, char out[8]);
uint64_t dmindex_u64_decode(const char bytes[8]);

/* The designs dmindex_index_open knows, in benchmark order, one per line ("local\nnaive\n...");
 * free with dmindex_free. NULL if out of memory. */
char* dmindex_designs(void);

/* --- Clusters (cluster.h) --- */

/* An embedded cluster: memory nodes inside this process. Zero fields take the C++ defaults
 * (2 memory nodes of 1 GiB, reserved and touched only as used; no modelled network). */
typedef struct dmindex_embedded_t {
  uint16_t memory_nodes;
  uint64_t pool_bytes;   /* per memory node */
  double round_trip_us;  /* modelled cost of a round trip */
  double bandwidth_gbps; /* modelled bandwidth (0: unlimited) */
} dmindex_embedded_t;

/* `embedded` may be NULL (the defaults). *cluster is set on OK, NULL otherwise. */
dmindex_code_t dmindex_cluster_open_embedded(const dmindex_embedded_t* embedded, dmindex_cluster_t** cluster,
                                             dmindex_status_t* status);
/* Running `dmindex memserver` processes: addresses[i] ("HOST:PORT") is memory node i.
 * transport: "shm" or "tcp" (the servers' --transport; NULL: shm). cluster_key_file: the servers'
 * --cluster-key (NULL or "": ~/.dmindex/cluster-key). Timeouts in ms, 0: the defaults (5 s to
 * connect, 10 s per verb). UNAVAILABLE if a server cannot be reached or refuses the key;
 * NOT_SUPPORTED if the program does not link dmindex::ucx (docs/C_API.md). */
dmindex_code_t dmindex_cluster_connect(const char* const* addresses, size_t address_count, const char* transport,
                                       const char* cluster_key_file, uint32_t connect_timeout_ms,
                                       uint32_t op_timeout_ms, dmindex_cluster_t** cluster,
                                       dmindex_status_t* status);
/* Releases this handle; indexes opened on the cluster keep it alive. */
void dmindex_cluster_destroy(dmindex_cluster_t* cluster);
/* Memory nodes, and the backend ("inproc", "ucx-shm", "ucx-tcp"; free with dmindex_free). */
dmindex_code_t dmindex_cluster_memory_nodes(const dmindex_cluster_t* cluster, uint16_t* count,
                                            dmindex_status_t* status);
dmindex_code_t dmindex_cluster_backend(const dmindex_cluster_t* cluster, char** backend, dmindex_status_t* status);
/* Verb counters of everything on the connection ("dmindex.fabric.round-trips", ...):
 * NOT_FOUND for a name it does not have. Names: one per line, free with dmindex_free. */
dmindex_code_t dmindex_cluster_property(const dmindex_cluster_t* cluster, const char* name, uint64_t* value,
                                        dmindex_status_t* status);
dmindex_code_t dmindex_cluster_property_names(const dmindex_cluster_t* cluster, char** names,
                                              dmindex_status_t* status);

/* --- Index options (options.h) --- */

/* IndexOptions with the C++ defaults (NULL if out of memory). */
dmindex_options_t* dmindex_options_create(void);
void dmindex_options_destroy(dmindex_options_t* options);
/* Sets a field of IndexOptions by its C++ name, from text: design, name, create_if_missing
 * (true/false), directory, key_format (bytes/u64), max_key_bytes, inline_value_bytes, max_value_bytes,
 * node_bytes, cache_bytes, compute_nodes, bulk_fill. INVALID_ARGUMENT for another name or a
 * value that is not one of the field (the option is then unchanged). */
dmindex_code_t dmindex_options_set(dmindex_options_t* options, const char* name, const char* value,
                                   dmindex_status_t* status);
/* Options from a string, "design=sherman;node_bytes=2048;hocl=off" (ParseIndexOptions: the
 * fields above by name, any other name a design knob); INVALID_ARGUMENT leaves them unchanged. */
dmindex_code_t dmindex_options_parse(dmindex_options_t* options, const char* text, dmindex_status_t* status);
/* A design knob (IndexOptions::knobs, e.g. "hocl" = "off"); dmindex_index_open checks it. */
dmindex_code_t dmindex_options_set_knob(dmindex_options_t* options, const char* knob, const char* value,
                                        dmindex_status_t* status);

/* --- Indexes (index.h) --- */

/* Opens (creating if absent and create_if_missing) the index options describe, on `cluster`,
 * or on a new embedded cluster of its own if `cluster` is NULL. `options` may be NULL (the
 * defaults). *index is set on OK, NULL otherwise. */
dmindex_code_t dmindex_index_open(const dmindex_options_t* options, dmindex_cluster_t* cluster,
                                  dmindex_index_t** index, dmindex_status_t* status);
/* Index::Close: INVALID_ARGUMENT while sessions of it are open (and it stays open); a
 * second close is OK. Later calls on the index are INVALID_ARGUMENT. */
dmindex_code_t dmindex_index_close(dmindex_index_t* index, dmindex_status_t* status);
/* Frees the handle; the index closes once its last session is gone (errors unreported: call
 * dmindex_index_close to see them). */
void dmindex_index_destroy(dmindex_index_t* index);
/* Index::Drop: closes the index and deletes it, freeing its memory; INVALID_ARGUMENT while
 * sessions are open; BUSY while another handle has it open (nothing is dropped, and this
 * handle stays open and working: try again once the others closed); NOT_SUPPORTED for
 * designs that cannot free theirs. */
dmindex_code_t dmindex_index_drop(dmindex_index_t* index, dmindex_status_t* status);
/* The same with DropOptions::force = (force != 0): handles of processes whose lease expired
 * (dead or stalled) are fenced instead of making the drop BUSY; it waits the lease's length
 * and a quarter at most. Handles of live processes still make it BUSY. */
dmindex_code_t dmindex_index_drop_with(dmindex_index_t* index, int force, dmindex_status_t* status);
/* Loads `count` pairs, keys strictly ascending, into an empty index (Index::BulkLoad). */
dmindex_code_t dmindex_index_bulk_load(dmindex_index_t* index, size_t count, const char* const* keys,
                                       const size_t* key_lengths, const char* const* values,
                                       const size_t* value_lengths, dmindex_status_t* status);

typedef struct dmindex_stats_t {
  uint64_t cache_hits;
  uint64_t cache_misses;
  uint64_t cache_bytes;
  uint64_t pool_bytes;
  uint64_t retries;
} dmindex_stats_t;
dmindex_code_t dmindex_index_stats(const dmindex_index_t* index, dmindex_stats_t* stats, dmindex_status_t* status);
/* Index::GetIntProperty ("dmindex.cache.hits", design counters): NOT_FOUND for a name the
 * index does not have. Names: one per line, free with dmindex_free. */
dmindex_code_t dmindex_index_property(const dmindex_index_t* index, const char* name, uint64_t* value,
                                      dmindex_status_t* status);
dmindex_code_t dmindex_index_property_names(const dmindex_index_t* index, char** names, dmindex_status_t* status);
/* The design's name (free with dmindex_free). */
dmindex_code_t dmindex_index_design(const dmindex_index_t* index, char** design, dmindex_status_t* status);
/* Partitioned designs (dex; NOT_SUPPORTED for designs where every compute node serves every
 * key): the compute node serving `key`, and whether this process hosts it. */
dmindex_code_t dmindex_index_route(const dmindex_index_t* index, const char* key, size_t key_length,
                                   uint32_t* compute_node, int* hosted, dmindex_status_t* status);
/* Partitioned designs: compute nodes in the whole cluster (all processes). */
dmindex_code_t dmindex_index_partitions(const dmindex_index_t* index, uint32_t* partitions, dmindex_status_t* status);
/* Partitioning::Repartition: compute node i serves [boundaries[i-1], boundaries[i]) (partitions - 1
 * ascending boundaries); keys may only leave compute nodes this process hosts (NOT_OWNER
 * otherwise). *seconds (may be NULL): how long it took. */
dmindex_code_t dmindex_index_repartition(dmindex_index_t* index, size_t count, const char* const* boundaries,
                                         const size_t* boundary_lengths, double* seconds, dmindex_status_t* status);

/* --- Sessions: one thread's handle (index.h) --- */

dmindex_code_t dmindex_session_open(dmindex_index_t* index, uint32_t compute_node, dmindex_session_t** session,
                                    dmindex_status_t* status);
/* Ends the session (INVALID_ARGUMENT while iterators of it exist). Later calls on it are
 * INVALID_ARGUMENT. */
dmindex_code_t dmindex_session_close(dmindex_session_t* session, dmindex_status_t* status);
void dmindex_session_destroy(dmindex_session_t* session);

/* NOT_FOUND if absent. On OK *value is a new buffer of *value_length bytes (dmindex_free). */
dmindex_code_t dmindex_get(dmindex_session_t* session, const char* key, size_t key_length, char** value,
                           size_t* value_length, dmindex_status_t* status);
/* Inserts, or overwrites an existing key's value (upsert). */
dmindex_code_t dmindex_put(dmindex_session_t* session, const char* key, size_t key_length, const char* value,
                           size_t value_length, dmindex_status_t* status);
/* Overwrites an existing key's value; NOT_FOUND if absent. */
dmindex_code_t dmindex_update(dmindex_session_t* session, const char* key, size_t key_length, const char* value,
                              size_t value_length, dmindex_status_t* status);
/* NOT_FOUND if absent. */
dmindex_code_t dmindex_delete(dmindex_session_t* session, const char* key, size_t key_length,
                              dmindex_status_t* status);
/* Up to `count` pairs with key >= start, ascending (Session::Scan), into *pairs
 * (dmindex_pairs_destroy). NOT_OWNER: *pairs holds those before a partition served elsewhere. */
dmindex_code_t dmindex_scan(dmindex_session_t* session, const char* start, size_t start_length, size_t count,
                            dmindex_pairs_t** pairs, dmindex_status_t* status);
/* Looks up `count` keys (Session::MultiGet): codes[i] is key i's code (OK, NOT_FOUND, ...);
 * for an OK key values[i] is a new buffer of value_lengths[i] bytes (dmindex_free), NULL
 * otherwise. Returns OK if the call ran (the per-key codes say what each found). */
dmindex_code_t dmindex_multi_get(dmindex_session_t* session, size_t count, const char* const* keys,
                                 const size_t* key_lengths, char** values, size_t* value_lengths,
                                 dmindex_code_t* codes, dmindex_status_t* status);

/* Sets key's value to `desired` if it is `expected`, atomically (Session::CompareAndSwap):
 * *swapped is 1 if it did, 0 if not; then, if `current` is not NULL, *current is a new buffer
 * of *current_length bytes holding the value found (dmindex_free). NOT_FOUND if absent.
 * Every design compares atomically (docs/API.md). */
dmindex_code_t dmindex_compare_and_swap(dmindex_session_t* session, const char* key, size_t key_length,
                                        const char* expected, size_t expected_length, const char* desired,
                                        size_t desired_length, int* swapped, char** current,
                                        size_t* current_length, dmindex_status_t* status);
/* Deletes every key in [begin, end) (Session::DeleteRange); *deleted (if not NULL) counts them. */
dmindex_code_t dmindex_delete_range(dmindex_session_t* session, const char* begin, size_t begin_length,
                                    const char* end, size_t end_length, uint64_t* deleted,
                                    dmindex_status_t* status);
/* A write batch (Session::Write, atomic per write): write i puts keys[i] = values[i], or deletes
 * keys[i] where values[i] is NULL. Every key and value is checked first (an invalid one changes
 * nothing); *applied (if not NULL) counts the writes applied. */
dmindex_code_t dmindex_write_batch(dmindex_session_t* session, size_t count, const char* const* keys,
                                   const size_t* key_lengths, const char* const* values,
                                   const size_t* value_lengths, size_t* applied, dmindex_status_t* status);

/* --- Scan results --- */

size_t dmindex_pairs_count(const dmindex_pairs_t* pairs);
/* Pair i's key and value, valid until the pairs are destroyed; NULL (length 0) past the end. */
const char* dmindex_pairs_key(const dmindex_pairs_t* pairs, size_t i, size_t* length);
const char* dmindex_pairs_value(const dmindex_pairs_t* pairs, size_t i, size_t* length);
void dmindex_pairs_destroy(dmindex_pairs_t* pairs);

/* --- Iterators (iterator.h) --- */

/* An iterator over the session's index: `upper_bound` (NULL: none) stops it before that key;
 * `readahead` pairs per batch (0: batches of 16 doubling to 1024). */
dmindex_code_t dmindex_iterator_create(dmindex_session_t* session, const char* upper_bound,
                                       size_t upper_bound_length, size_t readahead, dmindex_iterator_t** iterator,
                                       dmindex_status_t* status);
/* The same with ReadOptions' lower bound (NULL: none; it is included) and prefix mode
 * (prefix_bytes > 0: a seek confines the iteration to the target's first prefix_bytes bytes). */
dmindex_code_t dmindex_iterator_create_bounded(dmindex_session_t* session, const char* lower_bound,
                                               size_t lower_bound_length, const char* upper_bound,
                                               size_t upper_bound_length, uint32_t prefix_bytes, size_t readahead,
                                               dmindex_iterator_t** iterator, dmindex_status_t* status);
void dmindex_iterator_destroy(dmindex_iterator_t* iterator);
void dmindex_iterator_seek(dmindex_iterator_t* iterator, const char* target, size_t target_length);
void dmindex_iterator_seek_to_first(dmindex_iterator_t* iterator);
/* Backwards: the last key <= target, the last key (within the bounds). */
void dmindex_iterator_seek_for_prev(dmindex_iterator_t* iterator, const char* target, size_t target_length);
void dmindex_iterator_seek_to_last(dmindex_iterator_t* iterator);
/* Moves on (prev: back); a no-op on an invalid iterator (its status says INVALID_ARGUMENT). */
void dmindex_iterator_next(dmindex_iterator_t* iterator);
void dmindex_iterator_prev(dmindex_iterator_t* iterator);
/* 1 while positioned at a pair, 0 at the end, after an error or for a NULL iterator. */
int dmindex_iterator_valid(const dmindex_iterator_t* iterator);
/* The current pair, valid until the iterator moves; NULL (length 0) when not valid. */
const char* dmindex_iterator_key(const dmindex_iterator_t* iterator, size_t* length);
const char* dmindex_iterator_value(const dmindex_iterator_t* iterator, size_t* length);
/* OK while valid and at a normal end; otherwise why iteration stopped (or why the last call
 * was refused, e.g. next on an invalid iterator). */
dmindex_code_t dmindex_iterator_status(const dmindex_iterator_t* iterator, dmindex_status_t* status);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DMINDEX_C_H_ */
