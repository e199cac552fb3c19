/* dmindex from C (include/dmindex/c.h): an index on an embedded cluster, a few records, a
 * range read, every call checked. docs/C_API.md shows this file. */
#include <dmindex/c.h>

#include <stdio.h>
#include <string.h>

/* Prints why a call failed and returns 1 (the exit status), or 0 if it succeeded. */
static int Failed(dmindex_code_t code, const dmindex_status_t* status) {
  if (code == DMINDEX_OK) return 0;
  fprintf(stderr, "dmindex: %s\n", dmindex_status_message(status));
  return 1;
}

int main(void) {
  dmindex_status_t* status = dmindex_status_create();
  dmindex_options_t* options = dmindex_options_create();
  dmindex_index_t* index = NULL;
  dmindex_session_t* session = NULL;
  int failed = Failed(dmindex_options_set(options, "design", "sherman", status), status) ||
               Failed(dmindex_options_set(options, "key_format", "bytes", status), status) ||
               Failed(dmindex_options_set(options, "max_key_bytes", "64", status), status) ||
               Failed(dmindex_options_set(options, "node_bytes", "4096", status), status) ||
               Failed(dmindex_index_open(options, NULL, &index, status), status) ||  /* NULL: embedded */
               Failed(dmindex_session_open(index, 0, &session, status), status);
  const char* users[] = {"user1", "user2", "user3"};
  for (int i = 0; i < 3 && !failed; ++i)
    failed = Failed(dmindex_put(session, users[i], strlen(users[i]), "a record", 8, status), status);

  char* value = NULL;
  size_t length = 0;
  if (!failed) failed = Failed(dmindex_get(session, "user2", 5, &value, &length, status), status);
  if (!failed) printf("user2 = %.*s\n", (int)length, value);
  dmindex_free(value);
  if (!failed && dmindex_get(session, "user9", 5, &value, &length, status) != DMINDEX_NOT_FOUND) failed = 1;

  dmindex_iterator_t* it = NULL;
  if (!failed) failed = Failed(dmindex_iterator_create(session, "user3", 5, 0, &it, status), status);
  for (dmindex_iterator_seek(it, "user1", 5); !failed && dmindex_iterator_valid(it); dmindex_iterator_next(it)) {
    size_t n = 0;
    const char* key = dmindex_iterator_key(it, &n);
    printf("in [user1, user3): %.*s\n", (int)n, key);
  }
  if (!failed) failed = Failed(dmindex_iterator_status(it, status), status);
  dmindex_iterator_destroy(it);  /* an iterator before its session, a session before closing */
  dmindex_session_destroy(session);
  if (!failed) failed = Failed(dmindex_index_close(index, status), status);
  dmindex_index_destroy(index);
  dmindex_options_destroy(options);
  dmindex_status_destroy(status);
  return failed;
}
