//===- Version.cpp - Runtime version --------------------------------------===//

#include "megagraph/Runtime.h"

#ifndef MGRT_VERSION_STRING
#define MGRT_VERSION_STRING "0.0.0"
#endif

extern "C" const char *mgrt_version(void) { return MGRT_VERSION_STRING; }
