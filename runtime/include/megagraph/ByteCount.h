/*===- megagraph/ByteCount.h - Byte counts as users write them ------------===*
 *
 * The one parser of byte counts such as "17179869184", "512MiB", "2GiB",
 * "1.5G" or "80GB", shared by the runtime (--device-memory,
 * MEGAGRAPH_DEVICE_MEMORY: mgrt_parse_bytes) and the compiler
 * (--device-memory of the plan search: megagraph::parseByteCount), which
 * includes the copy in the build's include directory. Header-only C.
 *===----------------------------------------------------------------------===*/
#ifndef MEGAGRAPH_BYTECOUNT_H
#define MEGAGRAPH_BYTECOUNT_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/** Parses `text`: a non-negative decimal number (digits and '.'), then
 *  optional spaces and a unit: none or B (bytes), K/M/G/T or KiB..TiB
 *  (powers of 1024), KB..TB (powers of 1000), any case; spaces around the
 *  whole are allowed. Returns 1 and the byte count (not rounded) in
 *  `*bytes`, or 0. */
static inline int mgrt_byte_count_parse(const char *text, double *bytes) {
  static const struct {
    const char *name;
    double scale;
  } kUnits[] = {{"", 1},
                {"b", 1},
                {"k", 1024.0},
                {"kib", 1024.0},
                {"kb", 1e3},
                {"m", 1048576.0},
                {"mib", 1048576.0},
                {"mb", 1e6},
                {"g", 1073741824.0},
                {"gib", 1073741824.0},
                {"gb", 1e9},
                {"t", 1099511627776.0},
                {"tib", 1099511627776.0},
                {"tb", 1e12}};
  char number[64], unit[8];
  size_t n = 0, u = 0, i;
  const char *p = text;
  if (!p)
    return 0;
  while (*p == ' ')
    ++p;
  while ((*p >= '0' && *p <= '9') || *p == '.') {
    if (n + 1 >= sizeof number)
      return 0;
    number[n++] = *p++;
  }
  number[n] = '\0';
  if (n == 0)
    return 0;
  while (*p == ' ')
    ++p;
  while (*p && *p != ' ') {
    if (u + 1 >= sizeof unit)
      return 0;
    unit[u++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    ++p;
  }
  unit[u] = '\0';
  while (*p == ' ')
    ++p;
  if (*p)
    return 0;
  {
    char *end = NULL;
    const double v = strtod(number, &end);
    if (*end || !(v >= 0))
      return 0;
    for (i = 0; i < sizeof kUnits / sizeof kUnits[0]; ++i)
      if (strcmp(unit, kUnits[i].name) == 0) {
        *bytes = v * kUnits[i].scale;
        return 1;
      }
  }
  return 0;
}

#endif /* MEGAGRAPH_BYTECOUNT_H */
