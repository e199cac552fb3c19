/* The C API (include/dmindex/c.h) from C11: every call, its results and its error paths.
 *   c_api_test                                   on embedded clusters
 *   c_api_test HOST:PORT... --cluster-key FILE   the data calls on running memory servers too
 *                                                (scripts/with-memservers.sh gives these)
 * Ends with "N passed, N failed"; exits 1 if a check failed. */
#include <dmindex/c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond)                                                   \
  do {                                                                \
    if (cond) {                                                       \
      ++passed;                                                       \
    } else {                                                          \
      ++failed;                                                       \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                 \
  } while (0)

/* A call that must return `code`; prints the status message when it does not. */
#define EXPECT_CODE(code, call, st)                                                       \
  do {                                                                                    \
    dmindex_code_t got_ = (call);                                                         \
    CHECK(got_ == (code) && dmindex_status_code(st) == got_);                             \
    if (got_ != (code)) fprintf(stderr, "  %s -> %s\n", #call, dmindex_status_message(st)); \
  } while (0)
#define EXPECT_OK(call, st) EXPECT_CODE(DMINDEX_OK, call, st)

static int Contains(const char* haystack, const char* needle) {
  return haystack != NULL && strstr(haystack, needle) != NULL;
}

static void TestStatusAndHelpers(void) {
  dmindex_status_t* st = dmindex_status_create();
  CHECK(st != NULL);
  CHECK(dmindex_status_code(st) == DMINDEX_OK && strcmp(dmindex_status_message(st), "OK") == 0);
  CHECK(dmindex_status_code(NULL) == DMINDEX_INVALID_ARGUMENT && Contains(dmindex_status_message(NULL), "NULL"));
  CHECK(strcmp(dmindex_code_name(DMINDEX_NOT_FOUND), "NotFound") == 0);
  CHECK(strcmp(dmindex_code_name(DMINDEX_BUSY), "Busy") == 0);
  CHECK(strcmp(dmindex_code_name((dmindex_code_t)6), "Unknown") == 0);
  dmindex_free(NULL);
  char key[8];
  dmindex_u64_encode(0x0102030405060708ull, key);
  CHECK(key[0] == 1 && key[7] == 8 && dmindex_u64_decode(key) == 0x0102030405060708ull);
  char* designs = dmindex_designs();
  CHECK(Contains(designs, "sherman\n") && Contains(designs, "dex"));
  dmindex_free(designs);
  dmindex_status_destroy(st);
  dmindex_status_destroy(NULL);
}

static void TestCluster(void) {
  dmindex_status_t* st = dmindex_status_create();
  dmindex_cluster_t* cluster = NULL;
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_open_embedded(NULL, NULL, st), st);
  dmindex_embedded_t tiny = {1, 4096, 0, 0};
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_open_embedded(&tiny, &cluster, st), st);
  CHECK(cluster == NULL && Contains(dmindex_status_message(st), "pool_bytes"));
  dmindex_embedded_t negative = {1, 0, -1, 0};
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_open_embedded(&negative, &cluster, st), st);
  dmindex_embedded_t three = {3, 64ull << 20, 0, 0};
  EXPECT_OK(dmindex_cluster_open_embedded(&three, &cluster, st), st);
  uint16_t nodes = 0;
  EXPECT_OK(dmindex_cluster_memory_nodes(cluster, &nodes, st), st);
  CHECK(nodes == 3);
  char* backend = NULL;
  EXPECT_OK(dmindex_cluster_backend(cluster, &backend, st), st);
  CHECK(backend != NULL && strcmp(backend, "inproc") == 0);
  dmindex_free(backend);
  uint64_t reads = 1;
  EXPECT_OK(dmindex_cluster_property(cluster, "dmindex.fabric.reads", &reads, st), st);
  EXPECT_CODE(DMINDEX_NOT_FOUND, dmindex_cluster_property(cluster, "dmindex.no.such", &reads, st), st);
  char* names = NULL;
  EXPECT_OK(dmindex_cluster_property_names(cluster, &names, st), st);
  CHECK(Contains(names, "dmindex.fabric.round-trips"));
  dmindex_free(names);
  /* NULL handles and outputs */
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_memory_nodes(NULL, &nodes, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_backend(cluster, NULL, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_property(cluster, NULL, &reads, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_property_names(NULL, &names, st), st);
  dmindex_cluster_destroy(cluster);
  dmindex_cluster_destroy(NULL);

  /* Memory servers: refused before any connection is tried. */
  const char* bad[] = {"no-port-here"};
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_connect(bad, 0, NULL, NULL, 0, 0, &cluster, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_connect(bad, 1, "udp", NULL, 0, 0, &cluster, st), st);
  CHECK(Contains(dmindex_status_message(st), "udp"));
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_connect(bad, 1, "tcp", NULL, 0, 0, &cluster, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_cluster_connect(NULL, 1, NULL, NULL, 0, 0, &cluster, st), st);
  CHECK(cluster == NULL);
  dmindex_status_destroy(st);
}

static void TestOptions(void) {
  dmindex_status_t* st = dmindex_status_create();
  dmindex_options_t* o = dmindex_options_create();
  const char* fields[][2] = {{"design", "naive"},      {"name", "opts"},           {"create_if_missing", "false"},
                             {"key_format", "bytes"},  {"max_key_bytes", "64"},    {"inline_value_bytes", "32"},
                             {"max_value_bytes", "4096"}, {"node_bytes", "2048"},  {"cache_bytes", "1048576"},
                             {"compute_nodes", "2"},   {"bulk_fill", "0.5"}};
  for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i)
    EXPECT_OK(dmindex_options_set(o, fields[i][0], fields[i][1], st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_options_set(o, "colour", "blue", st), st);
  CHECK(Contains(dmindex_status_message(st), "node_bytes"));  /* lists the known options */
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_options_set(o, "node_bytes", "lots", st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_options_set(o, "key_format", "u32", st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_options_set(o, "bulk_fill", "1.5", st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_options_set(o, "create_if_missing", "yes", st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_options_set(NULL, "design", "naive", st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_options_set(o, "design", NULL, st), st);
  /* From a string: the same fields, other names are design knobs; a bad item changes nothing. */
  dmindex_options_t* parsed = dmindex_options_create();
  EXPECT_OK(dmindex_options_parse(parsed, "design=naive;node_bytes=2048;hocl=off", st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_options_parse(parsed, "design=sherman;node_bytes=lots", st), st);
  CHECK(Contains(dmindex_status_message(st), "node_bytes"));
  dmindex_options_destroy(parsed);

  /* create_if_missing=false on a new cluster: the index is absent. */
  dmindex_index_t* index = NULL;
  EXPECT_CODE(DMINDEX_NOT_FOUND, dmindex_index_open(o, NULL, &index, st), st);
  CHECK(index == NULL);
  EXPECT_OK(dmindex_options_set(o, "create_if_missing", "true", st), st);
  EXPECT_OK(dmindex_options_set_knob(o, "no_such_knob", "off", st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_options_set_knob(o, "", "off", st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_options_set_knob(o, NULL, "off", st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_open(o, NULL, &index, st), st);  /* an unknown knob */
  CHECK(Contains(dmindex_status_message(st), "no_such_knob"));
  EXPECT_OK(dmindex_options_set(o, "design", "no-such-design", st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_open(o, NULL, &index, st), st);
  CHECK(Contains(dmindex_status_message(st), "sherman"));  /* names the known designs */
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_open(o, NULL, NULL, st), st);
  dmindex_options_destroy(o);
  dmindex_options_destroy(NULL);

  /* NULL options and cluster: the defaults (sherman, byte keys) on an embedded cluster. */
  EXPECT_OK(dmindex_index_open(NULL, NULL, &index, st), st);
  char* design = NULL;
  EXPECT_OK(dmindex_index_design(index, &design, st), st);
  CHECK(design != NULL && strcmp(design, "sherman") == 0);
  dmindex_free(design);
  dmindex_index_destroy(index);
  dmindex_status_destroy(st);
}

/* The index "<what>-<design>" with byte keys of up to 32 bytes and values of up to 1000. */
static dmindex_index_t* OpenBytesIndex(dmindex_cluster_t* cluster, const char* design, const char* what,
                                       dmindex_status_t* st) {
  char name[64];
  snprintf(name, sizeof name, "%s-%s", what, design);
  dmindex_options_t* o = dmindex_options_create();
  EXPECT_OK(dmindex_options_set(o, "design", design, st), st);
  EXPECT_OK(dmindex_options_set(o, "name", name, st), st);
  EXPECT_OK(dmindex_options_set(o, "key_format", "bytes", st), st);
  EXPECT_OK(dmindex_options_set(o, "max_key_bytes", "32", st), st);
  EXPECT_OK(dmindex_options_set(o, "max_value_bytes", "1000", st), st);
  dmindex_index_t* index = NULL;
  EXPECT_OK(dmindex_index_open(o, cluster, &index, st), st);
  dmindex_options_destroy(o);
  return index;
}

static void TestPointCalls(dmindex_session_t* s, dmindex_status_t* st) {
  char* v = NULL;
  size_t n = 7;
  EXPECT_CODE(DMINDEX_NOT_FOUND, dmindex_get(s, "k1", 2, &v, &n, st), st);
  CHECK(v == NULL && n == 0);
  EXPECT_OK(dmindex_put(s, "k1", 2, "one", 3, st), st);
  EXPECT_OK(dmindex_get(s, "k1", 2, &v, &n, st), st);
  CHECK(n == 3 && memcmp(v, "one", 3) == 0);
  dmindex_free(v);
  EXPECT_OK(dmindex_put(s, "k1", 2, "uno", 3, st), st);  /* upsert */
  EXPECT_OK(dmindex_update(s, "k1", 2, "", 0, st), st);  /* an empty value */
  EXPECT_OK(dmindex_get(s, "k1", 2, &v, &n, st), st);
  CHECK(v != NULL && n == 0);
  dmindex_free(v);
  EXPECT_CODE(DMINDEX_NOT_FOUND, dmindex_update(s, "k2", 2, "x", 1, st), st);
  EXPECT_CODE(DMINDEX_NOT_FOUND, dmindex_get(s, "k2", 2, &v, &n, st), st);
  EXPECT_OK(dmindex_delete(s, "k1", 2, st), st);
  EXPECT_CODE(DMINDEX_NOT_FOUND, dmindex_delete(s, "k1", 2, st), st);
  /* Keys and values the rules refuse change nothing. */
  char big[1001];
  memset(big, 'v', sizeof big);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_put(s, "k3", 2, big, sizeof big, st), st);
  CHECK(Contains(dmindex_status_message(st), "1000"));
  EXPECT_CODE(DMINDEX_NOT_FOUND, dmindex_get(s, "k3", 2, &v, &n, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_put(s, "", 0, "x", 1, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_put(s, big, 33, "x", 1, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_put(s, NULL, 2, "x", 1, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_put(s, "k4", 2, NULL, 1, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_get(s, "k4", 2, NULL, &n, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_get(NULL, "k4", 2, &v, &n, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_delete(NULL, "k4", 2, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_update(NULL, "k4", 2, "x", 1, st), st);
  /* A NULL status: the code alone. */
  CHECK(dmindex_put(s, "k5", 2, "five", 4, NULL) == DMINDEX_OK);
  CHECK(dmindex_delete(s, "k5", 2, NULL) == DMINDEX_OK);
}

/* Keys "key00" .. "key(n-1)" with values "v<i>". */
static void PutKeys(dmindex_session_t* s, int n, dmindex_status_t* st) {
  for (int i = 0; i < n; ++i) {
    char k[16], v[16];
    snprintf(k, sizeof k, "key%02d", i);
    snprintf(v, sizeof v, "v%d", i);
    EXPECT_OK(dmindex_put(s, k, strlen(k), v, strlen(v), st), st);
  }
}

static void TestScanAndMultiGet(dmindex_session_t* s, dmindex_status_t* st) {
  PutKeys(s, 40, st);
  dmindex_pairs_t* pairs = NULL;
  EXPECT_OK(dmindex_scan(s, "key10", 5, 5, &pairs, st), st);
  CHECK(dmindex_pairs_count(pairs) == 5);
  size_t n = 0;
  const char* k = dmindex_pairs_key(pairs, 0, &n);
  CHECK(n == 5 && memcmp(k, "key10", 5) == 0);
  k = dmindex_pairs_key(pairs, 4, &n);
  CHECK(n == 5 && memcmp(k, "key14", 5) == 0);
  const char* v = dmindex_pairs_value(pairs, 4, &n);
  CHECK(n == 3 && memcmp(v, "v14", 3) == 0);
  CHECK(dmindex_pairs_key(pairs, 5, &n) == NULL && n == 0);
  CHECK(dmindex_pairs_value(pairs, 5, &n) == NULL && n == 0);
  dmindex_pairs_destroy(pairs);
  EXPECT_OK(dmindex_scan(s, NULL, 0, 1000, &pairs, st), st);  /* from the start */
  CHECK(dmindex_pairs_count(pairs) == 40);
  dmindex_pairs_destroy(pairs);
  CHECK(dmindex_pairs_count(NULL) == 0);
  dmindex_pairs_destroy(NULL);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_scan(s, "key", 3, 5, NULL, st), st);

  const char* keys[] = {"key03", "nokey", "", "key39"};
  const size_t lengths[] = {5, 5, 0, 5};
  char* values[4] = {NULL, NULL, NULL, NULL};
  size_t value_lengths[4] = {0, 0, 0, 0};
  dmindex_code_t codes[4] = {DMINDEX_BUSY, DMINDEX_BUSY, DMINDEX_BUSY, DMINDEX_BUSY};
  EXPECT_OK(dmindex_multi_get(s, 4, keys, lengths, values, value_lengths, codes, st), st);
  CHECK(codes[0] == DMINDEX_OK && value_lengths[0] == 2 && memcmp(values[0], "v3", 2) == 0);
  CHECK(codes[1] == DMINDEX_NOT_FOUND && values[1] == NULL);
  CHECK(codes[2] == DMINDEX_INVALID_ARGUMENT && values[2] == NULL);  /* the empty key */
  CHECK(codes[3] == DMINDEX_OK && value_lengths[3] == 3 && memcmp(values[3], "v39", 3) == 0);
  for (int i = 0; i < 4; ++i) dmindex_free(values[i]);
  EXPECT_OK(dmindex_multi_get(s, 0, NULL, NULL, NULL, NULL, NULL, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_multi_get(s, 4, keys, lengths, values, value_lengths, NULL, st), st);
}

static void TestIterator(dmindex_session_t* s, dmindex_status_t* st) {
  dmindex_iterator_t* it = NULL;
  EXPECT_OK(dmindex_iterator_create(s, "key20", 5, 0, &it, st), st);
  int count = 0;
  for (dmindex_iterator_seek(it, "key15", 5); dmindex_iterator_valid(it); dmindex_iterator_next(it)) {
    size_t kn = 0, vn = 0;
    const char* k = dmindex_iterator_key(it, &kn);
    const char* v = dmindex_iterator_value(it, &vn);
    char want[16];
    snprintf(want, sizeof want, "key%02d", 15 + count);
    CHECK(kn == 5 && memcmp(k, want, 5) == 0 && vn >= 2 && v[0] == 'v');
    ++count;
  }
  CHECK(count == 5);  /* key15 .. key19: the bound is exclusive */
  EXPECT_OK(dmindex_iterator_status(it, st), st);
  size_t n = 9;
  CHECK(dmindex_iterator_key(it, &n) == NULL && n == 0);
  CHECK(dmindex_iterator_value(it, &n) == NULL && n == 0);
  dmindex_iterator_next(it);  /* past the end: refused, says why */
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_iterator_status(it, st), st);
  dmindex_iterator_seek_to_first(it);
  CHECK(dmindex_iterator_valid(it));
  CHECK(memcmp(dmindex_iterator_key(it, &n), "key00", 5) == 0);
  EXPECT_OK(dmindex_iterator_status(it, st), st);
  char long_target[40];
  memset(long_target, 'k', sizeof long_target);
  dmindex_iterator_seek(it, long_target, sizeof long_target);  /* over max_key_bytes */
  CHECK(!dmindex_iterator_valid(it));
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_iterator_status(it, st), st);
  dmindex_iterator_seek(it, NULL, 3);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_iterator_status(it, st), st);

  /* The session cannot close under its iterator. */
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_session_close(s, st), st);
  CHECK(Contains(dmindex_status_message(st), "iterator"));
  dmindex_iterator_destroy(it);
  /* NULL iterators */
  dmindex_iterator_destroy(NULL);
  dmindex_iterator_seek(NULL, "k", 1);
  dmindex_iterator_seek_to_first(NULL);
  dmindex_iterator_next(NULL);
  CHECK(!dmindex_iterator_valid(NULL));
  CHECK(dmindex_iterator_key(NULL, &n) == NULL);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_iterator_status(NULL, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_iterator_create(NULL, NULL, 0, 0, &it, st), st);
}

static void TestIndexCalls(dmindex_index_t* index, dmindex_status_t* st) {
  dmindex_stats_t stats;
  EXPECT_OK(dmindex_index_stats(index, &stats, st), st);
  CHECK(stats.pool_bytes > 0);
  uint64_t value = 0;
  EXPECT_OK(dmindex_index_property(index, "dmindex.pool.bytes", &value, st), st);
  CHECK(value == stats.pool_bytes);
  EXPECT_CODE(DMINDEX_NOT_FOUND, dmindex_index_property(index, "dmindex.nope", &value, st), st);
  char* names = NULL;
  EXPECT_OK(dmindex_index_property_names(index, &names, st), st);
  CHECK(Contains(names, "dmindex.cache.hits"));
  dmindex_free(names);
  uint32_t node = 9;
  int hosted = 9;
  EXPECT_CODE(DMINDEX_NOT_SUPPORTED, dmindex_index_route(index, "key", 3, &node, &hosted, st), st);
  EXPECT_CODE(DMINDEX_NOT_SUPPORTED, dmindex_index_partitions(index, &node, st), st);
  EXPECT_CODE(DMINDEX_NOT_SUPPORTED, dmindex_index_repartition(index, 0, NULL, NULL, NULL, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_stats(NULL, &stats, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_property(index, "x", NULL, st), st);
}

/* Sessions, iterators, bulk load and closing on one cluster (embedded or memory servers). */
/* Reverse iteration, bounds, prefix mode, CompareAndSwap, DeleteRange and a write batch. */
static void TestOrderedOps(dmindex_session_t* s, dmindex_status_t* st) {
  for (int i = 0; i < 10; ++i) {
    char k[16];
    snprintf(k, sizeof k, "ord%d", i);
    EXPECT_OK(dmindex_put(s, k, strlen(k), "v", 1, st), st);
  }
  dmindex_iterator_t* it = NULL;
  EXPECT_OK(dmindex_iterator_create_bounded(s, "ord2", 4, "ord8", 4, 3, 0, &it, st), st);
  if (it == NULL) return;
  dmindex_iterator_seek_for_prev(it, "ord5", 4);
  size_t n = 0;
  const char* k = dmindex_iterator_key(it, &n);
  CHECK(dmindex_iterator_valid(it) && n == 4 && memcmp(k, "ord5", 4) == 0);
  int count = 0;
  for (; dmindex_iterator_valid(it); dmindex_iterator_prev(it)) ++count;
  CHECK(count == 4); /* ord5 .. ord2: the lower bound holds */
  dmindex_iterator_seek_to_last(it);
  k = dmindex_iterator_key(it, &n);
  CHECK(dmindex_iterator_valid(it) && memcmp(k, "ord7", 4) == 0); /* below the upper bound */
  EXPECT_OK(dmindex_iterator_status(it, st), st);
  dmindex_iterator_destroy(it);

  int swapped = 1;
  char* current = NULL;
  EXPECT_OK(dmindex_compare_and_swap(s, "ord1", 4, "x", 1, "y", 1, &swapped, &current, &n, st), st);
  CHECK(swapped == 0 && current != NULL && n == 1 && current[0] == 'v');
  dmindex_free(current);
  EXPECT_OK(dmindex_compare_and_swap(s, "ord1", 4, "v", 1, "y", 1, &swapped, NULL, NULL, st), st);
  CHECK(swapped == 1);
  EXPECT_CODE(DMINDEX_NOT_FOUND, dmindex_compare_and_swap(s, "none", 4, "v", 1, "y", 1, &swapped, NULL, NULL, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_compare_and_swap(s, "ord1", 4, "v", 1, "y", 1, NULL, NULL, NULL, st), st);

  uint64_t deleted = 0;
  EXPECT_OK(dmindex_delete_range(s, "ord3", 4, "ord6", 4, &deleted, st), st);
  CHECK(deleted == 3);
  const char* keys[3] = {"ord3", "ord4", "ord9"};
  const size_t lengths[3] = {4, 4, 4};
  const char* values[3] = {"a", "b", NULL};
  const size_t value_lengths[3] = {1, 1, 0};
  size_t applied = 0;
  EXPECT_OK(dmindex_write_batch(s, 3, keys, lengths, values, value_lengths, &applied, st), st);
  CHECK(applied == 3);
  char* v = NULL;
  EXPECT_OK(dmindex_get(s, "ord4", 4, &v, &n, st), st);
  CHECK(v != NULL && n == 1 && v[0] == 'b');
  dmindex_free(v);
  EXPECT_CODE(DMINDEX_NOT_FOUND, dmindex_get(s, "ord9", 4, &v, &n, st), st);
}

static void TestData(dmindex_cluster_t* cluster, const char* design) {
  dmindex_status_t* st = dmindex_status_create();
  dmindex_index_t* index = OpenBytesIndex(cluster, design, "data", st);
  dmindex_session_t* s = NULL;
  if (index == NULL) return;
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_session_open(index, 5, &s, st), st);  /* 1 compute node */
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_session_open(NULL, 0, &s, st), st);
  EXPECT_OK(dmindex_session_open(index, 0, &s, st), st);
  if (s == NULL) return;
  TestPointCalls(s, st);
  TestScanAndMultiGet(s, st);
  TestIterator(s, st);
  TestOrderedOps(s, st);
  TestIndexCalls(index, st);

  /* Close: not under an open session; then every call on a closed handle is refused. */
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_close(index, st), st);
  EXPECT_OK(dmindex_session_close(s, st), st);
  char* v = NULL;
  size_t n = 0;
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_get(s, "key01", 5, &v, &n, st), st);
  CHECK(Contains(dmindex_status_message(st), "closed"));
  EXPECT_OK(dmindex_session_close(s, st), st);
  dmindex_session_destroy(s);
  dmindex_session_destroy(NULL);
  EXPECT_OK(dmindex_index_close(index, st), st);
  EXPECT_OK(dmindex_index_close(index, st), st);  /* a second close is OK */
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_session_open(index, 0, &s, st), st);
  CHECK(s == NULL && Contains(dmindex_status_message(st), "closed"));
  dmindex_stats_t stats;
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_stats(index, &stats, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_close(NULL, st), st);
  dmindex_index_destroy(index);
  dmindex_index_destroy(NULL);

  /* Bulk load into an empty index; refused when unsorted, loading nothing. */
  index = OpenBytesIndex(cluster, design, "bulk", st);
  const char* keys[] = {"a", "b", "c"};
  const char* bad_keys[] = {"b", "a", "c"};
  const char* values[] = {"1", "2", "3"};
  const size_t ones[] = {1, 1, 1};
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_bulk_load(index, 3, bad_keys, ones, values, ones, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_bulk_load(index, 3, NULL, ones, values, ones, st), st);
  EXPECT_OK(dmindex_index_bulk_load(index, 3, keys, ones, values, ones, st), st);
  EXPECT_OK(dmindex_session_open(index, 0, &s, st), st);
  /* The index handle may go first: its session keeps the index alive. */
  dmindex_index_destroy(index);
  EXPECT_OK(dmindex_get(s, "b", 1, &v, &n, st), st);
  CHECK(n == 1 && v[0] == '2');
  dmindex_free(v);
  dmindex_iterator_t* it = NULL;
  EXPECT_OK(dmindex_iterator_create(s, NULL, 0, 2, &it, st), st);
  dmindex_session_destroy(s);  /* and a session's iterator keeps the session */
  int count = 0;
  for (dmindex_iterator_seek_to_first(it); dmindex_iterator_valid(it); dmindex_iterator_next(it)) ++count;
  CHECK(count == 3);
  dmindex_iterator_destroy(it);
  dmindex_status_destroy(st);
}

/* Drop while a second handle holds the index: BUSY, even forced (its process is alive), and
 * the refused handle stays open and working; once the other handle closed, the drop goes
 * through and the name is gone. */
static void TestDrop(dmindex_cluster_t* cluster, const char* design) {
  dmindex_status_t* st = dmindex_status_create();
  dmindex_index_t* index = OpenBytesIndex(cluster, design, "drop", st);
  dmindex_index_t* other = OpenBytesIndex(cluster, design, "drop", st);
  dmindex_session_t* s = NULL;
  EXPECT_OK(dmindex_session_open(index, 0, &s, st), st);
  EXPECT_OK(dmindex_put(s, "k", 1, "v", 1, st), st);
  dmindex_session_destroy(s);
  EXPECT_CODE(DMINDEX_BUSY, dmindex_index_drop(index, st), st);
  EXPECT_CODE(DMINDEX_BUSY, dmindex_index_drop_with(index, 1, st), st);
  EXPECT_OK(dmindex_session_open(index, 0, &s, st), st); /* still open */
  char* v = NULL;
  size_t n = 0;
  EXPECT_OK(dmindex_get(s, "k", 1, &v, &n, st), st);
  CHECK(n == 1 && v[0] == 'v');
  dmindex_free(v);
  dmindex_session_destroy(s);
  EXPECT_OK(dmindex_index_close(other, st), st);
  dmindex_index_destroy(other);
  EXPECT_OK(dmindex_index_drop_with(index, 0, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_session_open(index, 0, &s, st), st); /* closed */
  dmindex_index_destroy(index);
  dmindex_status_destroy(st);
}

/* The u64 key format through the integer helpers. */
static void TestU64(dmindex_cluster_t* cluster) {
  dmindex_status_t* st = dmindex_status_create();
  dmindex_options_t* o = dmindex_options_create();
  EXPECT_OK(dmindex_options_set(o, "name", "u64", st), st);
  EXPECT_OK(dmindex_options_set(o, "key_format", "u64", st), st); /* the default is bytes */
  dmindex_index_t* index = NULL;
  EXPECT_OK(dmindex_index_open(o, cluster, &index, st), st);
  dmindex_session_t* s = NULL;
  EXPECT_OK(dmindex_session_open(index, 0, &s, st), st);
  char k[8], v[8];
  for (uint64_t i = 1; i <= 100; ++i) {
    dmindex_u64_encode(i, k);
    dmindex_u64_encode(i * 10, v);
    EXPECT_OK(dmindex_put(s, k, 8, v, 8, st), st);
  }
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_put(s, "short", 5, v, 8, st), st);
  dmindex_u64_encode(0, k);  /* reserved */
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_put(s, k, 8, v, 8, st), st);
  dmindex_u64_encode(42, k);
  char* got = NULL;
  size_t n = 0;
  EXPECT_OK(dmindex_get(s, k, 8, &got, &n, st), st);
  CHECK(n == 8 && dmindex_u64_decode(got) == 420);
  dmindex_free(got);
  dmindex_session_destroy(s);
  EXPECT_OK(dmindex_index_close(index, st), st);
  dmindex_index_destroy(index);
  dmindex_options_destroy(o);
  dmindex_status_destroy(st);
}

/* DEX's logical partitions: two compute nodes in this process, a boundary moved. */
static void TestPartitions(void) {
  dmindex_status_t* st = dmindex_status_create();
  dmindex_options_t* o = dmindex_options_create();
  EXPECT_OK(dmindex_options_set(o, "design", "dex", st), st);
  EXPECT_OK(dmindex_options_set(o, "key_format", "bytes", st), st);
  EXPECT_OK(dmindex_options_set(o, "max_key_bytes", "32", st), st);
  EXPECT_OK(dmindex_options_set(o, "compute_nodes", "2", st), st);
  dmindex_index_t* index = NULL;
  EXPECT_OK(dmindex_index_open(o, NULL, &index, st), st);
  uint32_t partitions = 0, node = 9;
  int hosted = 0;
  EXPECT_OK(dmindex_index_partitions(index, &partitions, st), st);
  CHECK(partitions == 2);
  const char* boundary[] = {"m"};
  const size_t length[] = {1};
  double seconds = -1;
  EXPECT_OK(dmindex_index_repartition(index, 1, boundary, length, &seconds, st), st);
  CHECK(seconds >= 0);
  EXPECT_OK(dmindex_index_route(index, "a", 1, &node, &hosted, st), st);
  CHECK(node == 0 && hosted == 1);
  EXPECT_OK(dmindex_index_route(index, "z", 1, &node, &hosted, st), st);
  CHECK(node == 1 && hosted == 1);
  const char* two[] = {"m", "n"};
  const size_t lengths[] = {1, 1};
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_repartition(index, 2, two, lengths, NULL, st), st);
  EXPECT_CODE(DMINDEX_INVALID_ARGUMENT, dmindex_index_route(index, "a", 1, NULL, &hosted, st), st);
  EXPECT_OK(dmindex_index_close(index, st), st);
  dmindex_index_destroy(index);
  dmindex_options_destroy(o);
  dmindex_status_destroy(st);
}

int main(int argc, char** argv) {
  const char* addresses[8];
  size_t address_count = 0;
  const char* key_file = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--cluster-key") == 0 && i + 1 < argc) key_file = argv[++i];
    else if (address_count < 8) addresses[address_count++] = argv[i];
  }
  dmindex_status_t* st = dmindex_status_create();
  dmindex_cluster_t* cluster = NULL;
  if (address_count == 0) {
    TestStatusAndHelpers();
    TestCluster();
    TestOptions();
    TestPartitions();
    EXPECT_OK(dmindex_cluster_open_embedded(NULL, &cluster, st), st);
  } else {
    EXPECT_OK(dmindex_cluster_connect(addresses, address_count, "shm", key_file, 0, 0, &cluster, st), st);
  }
  if (cluster != NULL) {
    TestData(cluster, "sherman");
    TestData(cluster, "naive");
    TestDrop(cluster, "sherman");
    TestU64(cluster);
    dmindex_cluster_destroy(cluster);
  }
  dmindex_status_destroy(st);
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
