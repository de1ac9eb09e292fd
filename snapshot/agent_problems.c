/*
 * agent_problems.c — what shows that a page is broken (issue 13, point
 * 6c): the browser's own log entries of level error (Log.entryAdded: a
 * request that failed or was answered >= 400, a CSP or mixed-content
 * refusal, an intervention), counted per tab since its document loaded,
 * with the last PROBLEMS_MAX kept as short texts. The snapshot header says
 * problems=N; `tabs problems` lists them.
 *
 * Not Runtime.enable: console.error and uncaught exceptions would need it,
 * and a page can tell it is on (docs/threat-model.md). URLs are shown
 * redacted (snap_url_redact, strict) and scrubbed of session values; a
 * text is at most PROBLEM_TEXT_MAX bytes; the page-text writer marks them
 * when shown.
 *
 * Part of snapshot/ (see agent_int.h for what the agent* files share).
 */
#include "snapshot/agent_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBLEM_TEXT_MAX 200

/* Forget the problems of an earlier document of t. */
static void problems_reset(snap_tab *t)
{
    for (size_t i = 0; i < SNAP_PROBLEMS_MAX; i++) {
        free(t->problem[i]);
        t->problem[i] = NULL;
    }
    t->nproblems = 0;
    t->problems_nav = t->nav;
}

void snap_problems_clear(snap_tab *t)
{
    problems_reset(t);
}

size_t snap_problems_count(const snap_tab *t)
{
    return t->problems_nav == t->nav ? t->nproblems : 0;
}

/* s with every word that holds "://" replaced by its redacted, scrubbed
 * form (new; NULL when out of memory). */
static char *redact_words(const snap_agent *a, const char *s)
{
    base_buf b = {0};
    while (*s) {
        size_t n = strcspn(s, " \t\n\"'()");
        if (n == 0) {
            base_buf_put(&b, s, 1);
            s++;
            continue;
        }
        char *w = strndup(s, n);
        char *red = w && strstr(w, "://") ? snap_url_redact(w, true, NULL) : NULL;
        char *shown = red ? snap_scrub_url(a, red) : w ? snap_scrub_str(a, w) : NULL;
        base_buf_puts(&b, shown ? shown : "[url]");
        free(shown);
        free(red);
        free(w);
        s += n;
    }
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s ? b.s : strdup("");
}

void snap_problem_event(snap_agent *a, snap_tab *t, const char *method, const json_val *p)
{
    if (strcmp(method, "Log.entryAdded") != 0)
        return;
    const json_val *e = json_get(p, "entry");
    const char *level = json_get_str(e, "level");
    if (!level || strcmp(level, "error") != 0)
        return;
    const char *source = json_get_str(e, "source");
    const char *text = json_get_str(e, "text");
    const char *url = json_get_str(e, "url");
    /* The browser's own favicon request is not the page's problem. */
    size_t ul = url ? strlen(url) : 0;
    if (ul >= 12 && strcmp(url + ul - 12, "/favicon.ico") == 0)
        return;
    if (t->problems_nav != t->nav)
        problems_reset(t);
    char *rtext = redact_words(a, text ? text : "");
    char *rurl = url && *url ? snap_url_redact(url, true, NULL) : NULL;
    char *surl = rurl ? snap_scrub_url(a, rurl) : NULL;
    char line[PROBLEM_TEXT_MAX + 1];
    snprintf(line, sizeof line, "[%s] %s%s%s", source ? source : "other",
             rtext ? rtext : "", surl ? " at " : "", surl ? surl : "");
    base_utf8_trim(line);
    free(rtext);
    free(rurl);
    free(surl);
    size_t slot = t->nproblems % SNAP_PROBLEMS_MAX;
    free(t->problem[slot]);
    t->problem[slot] = strdup(line);
    t->nproblems++;
}

void snap_problems_each(const snap_tab *t, void (*fn)(void *ud, const char *text), void *ud)
{
    size_t n = snap_problems_count(t);
    size_t first = n > SNAP_PROBLEMS_MAX ? n - SNAP_PROBLEMS_MAX : 0;
    for (size_t i = first; i < n; i++) {
        const char *s = t->problem[i % SNAP_PROBLEMS_MAX];
        if (s)
            fn(ud, s);
    }
}
