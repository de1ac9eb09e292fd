/*
 * cdp_int.h — internals shared by the files of cdp/ only.
 */
#ifndef CDPGATE_CDP_INT_H
#define CDPGATE_CDP_INT_H

#include "cdp/cdp.h"
#include "base/base.h"

#include <stdarg.h>

/* Fill err (may be NULL) and return code. */
int cdp_seterr(cdp_err *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Remaining ms until deadline (>= 0); deadline < 0 means none: -1. */
int cdp_remaining(int64_t deadline);
/* Deadline for a timeout: 0 -> dflt, -1 -> none (-1). */
int64_t cdp_deadline(int timeout_ms, int dflt);


#endif
