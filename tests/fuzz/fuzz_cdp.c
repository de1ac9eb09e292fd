/*
 * fuzz_cdp.c — CDP messages from a browser, fuzzed: the input is split at
 * NUL bytes into messages injected into a connection that has calls pending
 * on the browser and on two sessions (attached by the first messages when
 * the input says so). Whatever arrives, the connection must not crash,
 * leak, or resolve a call with anything but a reply or an error.
 */
#include "cdp/cdp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_event(void *ud, cdp_conn *c, const char *session, const char *method,
                     const json_val *params)
{
    (void)c;
    (*(size_t *)ud) += strlen(session) + strlen(method) + json_len(params);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (size > 1 << 20 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    /* The peer end is never read: our few small commands fit its buffer. */
    ws_transport *t = ws_transport_pipe(sv[0], dup(sv[0]), 1 << 20);
    cdp_opts o = {8, 4, 4096, 1000};
    cdp_conn *c = cdp_conn_new(t, &o);
    if (!c) {
        close(sv[1]);
        return 0;
    }
    size_t seen = 0;
    cdp_listen(c, on_event, &seen);
    static const char attach[] =
        "{\"method\":\"Target.attachedToTarget\",\"params\":{\"sessionId\":\"S1\","
        "\"targetInfo\":{\"targetId\":\"T1\",\"type\":\"page\",\"url\":\"about:blank\"}}}";
    cdp_conn_inject(c, attach, sizeof attach - 1, NULL);
    uint64_t ids[3] = {0, 0, 0};
    cdp_send(c, NULL, "Browser.getVersion", NULL, &ids[0], NULL);
    cdp_send(c, "S1", "Runtime.evaluate", "{\"expression\":\"1\"}", &ids[1], NULL);
    cdp_send(c, "S1", "Page.enable", NULL, &ids[2], NULL);
    size_t start = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i == size || data[i] == 0) {
            if (cdp_conn_inject(c, (const char *)data + start, i - start, NULL))
                break;
            start = i + 1;
        }
    }
    /* Collect whatever was answered; unanswered calls time out at once. */
    for (int k = 0; k < 3; k++) {
        cdp_reply r = {0};
        cdp_err e;
        if (ids[k] && cdp_wait(c, ids[k], 1, &r, &e) == 0 && !r.doc)
            abort();    /* success always carries the reply */
        cdp_reply_free(&r);
    }
    for (size_t i = 0; i < cdp_target_count(c); i++) {
        const cdp_target *tg = cdp_target_at(c, i);
        seen += strlen(tg->session_id) + strlen(tg->url);
    }
    cdp_conn_free(c);
    close(sv[1]);
    return 0;
}
