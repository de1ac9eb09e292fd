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

/* args with every {{name}} replaced by its value from o->vars, escaped for
 * a JSON string (new). NULL when out of memory or a name has no value:
 * then *missing points at it and *mlen is its length (play.c). */
char *replay_subst(const char *args, const replay_opts *o, const char **missing,
                   size_t *mlen);

struct gate;
/* The "plan" member of a dry run: each active step from o->from on with
 * the gate's decision on what the trail recorded (plan.c). */
void replay_plan(struct gate *g, const replay_trail *t, const replay_opts *o, json_w *w);

#endif
