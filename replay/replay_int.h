/*
 * replay_int.h — what the files of replay/ share (no other module and no
 * test includes it).
 */
#ifndef CDPGATE_REPLAY_INT_H
#define CDPGATE_REPLAY_INT_H

#include "replay/replay.h"

#include "base/base.h"

/* Fill *err (NULL accepted) with code, line (0: not about a line) and a
 * printf-style message prefixed "trail line N: " or "trail: "; returns
 * code. */
int replay_fail(replay_err *err, int code, unsigned line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

#endif
