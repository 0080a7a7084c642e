// System-library shim for the SQLite driver: libsqlite3 (the engine) and zlib (raw DEFLATE of
// Core Data's Z_MODELCACHE). Found through pkg-config; apt packages libsqlite3-dev, zlib1g-dev.
#ifndef STRATA_CSQLITE_SHIM_H
#define STRATA_CSQLITE_SHIM_H

#include <sqlite3.h>
#include <zlib.h>

#endif
