// System-library shim for the LMDB driver: liblmdb (apt liblmdb-dev). Found through pkg-config
// (`lmdb.pc`) when present; the module map links `lmdb` itself, so a machine without the .pc file
// builds too as long as lmdb.h is on the default include path.
#ifndef STRATA_CLMDB_SHIM_H
#define STRATA_CLMDB_SHIM_H

#include <lmdb.h>

#endif
