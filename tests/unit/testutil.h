/* testutil: small helpers shared by the unit tests: fixture paths, hex,
 * whole-file reads and scratch folders. Test code only; each helper fails
 * the running test (ck_abort) rather than return an error. */
#ifndef TESTUTIL_H
#define TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Returns the absolute path of tests/unit/<rel> (the tests run from
 * tests/unit), in a new string. */
char *tu_abspath (const char *rel);

/* Decodes hex (an even number of digits) into a new buffer of *len bytes
 * (NULL-safe: always returns a non-NULL buffer, even for ""). */
uint8_t *tu_hex_decode (const char *hex, size_t *len);

/* Loads a JSON file (new reference); fails the test if it cannot. */
json_t *tu_load_json (const char *path);

/* Makes a new empty folder under $TMPDIR or /tmp; returns its path (new). */
char *tu_mkdtemp (void);

/* Removes a folder tree made by the tests (best effort). */
void tu_rmtree (const char *path);

/* Writes len bytes to path (creating or truncating it). */
void tu_write_file (const char *path, const void *data, size_t len);

#endif
