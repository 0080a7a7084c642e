// System-library shim for the PostgreSQL driver: libpq (apt libpq-dev). Found through pkg-config
// (`libpq.pc`, which adds -I/usr/include/postgresql); the module map links `pq` itself.
#ifndef STRATA_CLIBPQ_SHIM_H
#define STRATA_CLIBPQ_SHIM_H

#include <libpq-fe.h>
#include <poll.h>

// The diagnostic field codes are character-literal macros, which Swift does not import.
static inline int strata_pq_diag_sqlstate(void) { return PG_DIAG_SQLSTATE; }
static inline int strata_pq_diag_message_primary(void) { return PG_DIAG_MESSAGE_PRIMARY; }
static inline int strata_pq_diag_message_detail(void) { return PG_DIAG_MESSAGE_DETAIL; }

// A notice processor that drops notices ("schema already exists, skipping"): the driver reports
// through its errors, never by printing.
static void strata_pq_ignore_notice(void *arg, const char *message) { (void)arg; (void)message; }
static inline void strata_pq_silence(PGconn *conn) { PQsetNoticeProcessor(conn, strata_pq_ignore_notice, 0); }

#endif
