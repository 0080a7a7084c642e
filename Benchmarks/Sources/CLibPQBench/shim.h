// libpq for the raw PostgreSQL baseline (libpq-c); the driver's own shim is CLibPQ.
#ifndef STRATA_CLIBPQBENCH_SHIM_H
#define STRATA_CLIBPQBENCH_SHIM_H

#include <libpq-fe.h>

static void strata_bench_pq_ignore_notice(void *arg, const char *message) { (void)arg; (void)message; }
static inline void strata_bench_pq_silence(PGconn *conn) { PQsetNoticeProcessor(conn, strata_bench_pq_ignore_notice, 0); }

#endif
