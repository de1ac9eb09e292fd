/*
 * live_int.h — what the files of live/ share (no other module includes it).
 */
#ifndef CDPGATE_LIVE_INT_H
#define CDPGATE_LIVE_INT_H

#include "live/live.h"

/* Fill err (may be NULL) with code, offset and the formatted message;
 * returns code. The message must never hold a token or cookie value. */
int live_fail(live_err *err, int code, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
