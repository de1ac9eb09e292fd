/*
 * gate_bench.c — what the policy gate costs per action: gate_classify,
 * gate_decide (read, auth_change, consequential), gate_check without an
 * audit log, with an audit log on a temporary file (one write(2) per line),
 * and with the fsync a pending (consequential, allowed) decision needs; plus
 * parsing a full grant. Built and run by bench/run.sh; figures are printed,
 * not asserted. Each figure is the median over BATCHES batches of the mean
 * time per call inside a batch, in microseconds.
 *
 *     gate_bench [directory for the temporary audit log, default /tmp]
 *
 * BENCH_QUICK=1 (bench/smoke.sh, CI): 5 batches of a hundredth of the calls,
 * so the program is known to run; its figures are rough.
 */
#include "gate/gate.h"
#include "bench/benchlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 31

static const char *GRANT =
    "{\"task\":\"bench\",\"principal\":\"bench\",\"tools\":[\"open\",\"snapshot\",\"click\","
    "\"type\",\"dialog\"],\"origins\":[\"https://bank.test\",\"*.shop.test\",\"https://a.test\","
    "\"https://b.test\",\"https://c.test:8443\"],\"recipients\":[\"bob@partner.test\"],"
    "\"egress\":[\"approved_origin_fetch\",\"structured_send\"],"
    "\"identities\":{\"https://bank.test\":\"alice\"},"
    "\"bound\":[{\"origin\":\"https://bank.test\",\"tool\":\"click\",\"name\":\"Delete project\"}],"
    "\"expires\":\"2099-01-01T00:00:00Z\"}";

enum { OP_CLASSIFY, OP_DECIDE, OP_CHECK, OP_PARSE, OP_NET };

/* The page request OP_NET judges (gate_check_net: every paused request). */
static gate_net bench_net;

/* BENCH_QUICK=1: fewer batches and calls (set once by main). */
static int batches = BATCHES, divisor = 1;

/* Median over the batches of the mean microseconds per call of n calls. */
static double measure(gate *gt, int op, const gate_request *r, int n)
{
    double t[BATCHES];
    gate_decision d;
    n = n / divisor > 0 ? n / divisor : 1;
    for (int b = 0; b < batches; b++) {
        double t0 = bench_now_s();
        for (int i = 0; i < n; i++) {
            if (op == OP_CLASSIFY) {
                int k;
                gate_classify(r, &k, NULL, 0);
            } else if (op == OP_DECIDE) {
                gate_decide(gt, r, &d);
            } else if (op == OP_NET) {
                char why[256];
                if (gate_check_net(gt, &bench_net, why, sizeof why) != GATE_ALLOW)
                    exit(1);
            } else if (op == OP_CHECK) {
                if (gate_check(gt, r, &d) != 0) {
                    fprintf(stderr, "gate_bench: gate_check failed: %s\n", d.reason);
                    exit(1);
                }
            } else {
                gate_grant *g;
                if (gate_grant_parse(GRANT, strlen(GRANT), &g, NULL) != 0)
                    exit(1);
                gate_grant_free(g);
            }
        }
        t[b] = (bench_now_s() - t0) / n * 1e6;
    }
    qsort(t, (size_t)batches, sizeof t[0], bench_cmp_double);
    return t[batches / 2];
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    const char *quick = getenv("BENCH_QUICK");
    if (quick && strcmp(quick, "1") == 0) {
        batches = 5;
        divisor = 100;
    }
    char log[4096];
    snprintf(log, sizeof log, "%s/gate_bench.XXXXXX", dir);
    int fd = mkstemp(log);
    if (fd < 0) {
        perror("gate_bench: mkstemp");
        return 1;
    }
    close(fd);
    gate_grant *g;
    gate_err e;
    if (gate_grant_parse(GRANT, strlen(GRANT), &g, &e) != 0) {
        fprintf(stderr, "gate_bench: %s\n", e.msg);
        return 1;
    }
    gate_opts none = {.confirm = bench_allow_hook};
    gate_opts logged = {.confirm = bench_allow_hook, .audit = log};
    gate *plain = gate_new(g, &none, &e), *audited = gate_new(g, &logged, &e);
    gate_grant_free(g);
    if (!plain || !audited) {
        fprintf(stderr, "gate_bench: %s\n", e.msg);
        return 1;
    }
    gate_target edit = {.role = "button", .name = "Edit invoice", .row = "Invoice 7 March"};
    gate_target del = {.role = "button", .name = "Delete project", .row = "alpha"};
    gate_target transfer = {.role = "button", .name = "Continue", .submits = true,
                            .form_action = "https://bank.test/api/transfer",
                            .form_method = "post"};
    gate_request rd = {.tool = "snapshot", .origin = "https://bank.test",
                       .url = "https://bank.test/invoices", .obs = "o1"};
    gate_request ac = {.tool = "click", .origin = "https://bank.test",
                       .url = "https://bank.test/invoices", .authenticated = true,
                       .state_change = true, .target = &edit, .obs = "o1"};
    gate_request it = ac;
    it.origin = "https://www.shop.test";
    it.authenticated = false;
    gate_request cq = ac;
    cq.target = &transfer;
    gate_request bd = ac;
    bd.target = &del;

    printf("== gate: cost per call (microseconds, median of %d batches; lower is better)%s\n",
           batches, divisor > 1 ? " [BENCH_QUICK: rough]" : "");
    printf("  %-44s %10.3f\n", "gate_grant_parse (full grant)",
           measure(NULL, OP_PARSE, NULL, 2000));
    printf("  %-44s %10.3f\n", "gate_classify (click, named button)",
           measure(NULL, OP_CLASSIFY, &ac, 20000));
    printf("  %-44s %10.3f\n", "gate_classify (form POST /transfer)",
           measure(NULL, OP_CLASSIFY, &cq, 20000));
    printf("  %-44s %10.3f\n", "gate_decide read (snapshot)",
           measure(plain, OP_DECIDE, &rd, 20000));
    printf("  %-44s %10.3f\n", "gate_decide auth_change -> confirm",
           measure(plain, OP_DECIDE, &ac, 20000));
    printf("  %-44s %10.3f\n", "gate_decide consequential -> stop",
           measure(plain, OP_DECIDE, &cq, 20000));
    double check_us = measure(plain, OP_CHECK, &it, 20000);
    printf("  %-44s %10.3f\n", "gate_check interact, no audit log", check_us);
    printf("  %-44s %10.3f\n", "gate_check confirm (hook), no audit log",
           measure(plain, OP_CHECK, &ac, 20000));
    /* A paused page request (issue 11: every request of every type is
     * judged; a privileged context's against the grant and its assets). */
    bench_net.method = "GET";
    bench_net.url = "https://bank.test/static/logo.png?v=3";
    bench_net.type = "Image";
    bench_net.subresource = true;
    printf("  %-44s %10.3f\n", "gate_check_net image, untrusted context",
           measure(plain, OP_NET, NULL, 20000));
    bench_net.privileged = true;
    printf("  %-44s %10.3f\n", "gate_check_net image, privileged context",
           measure(plain, OP_NET, NULL, 20000));
    double audit_us = measure(audited, OP_CHECK, &it, 2000);
    printf("  %-44s %10.3f\n", "gate_check interact, audit log (write)", audit_us);
    printf("  %-44s %10.3f\n", "gate_check confirmed, audit log (write+fsync)",
           measure(audited, OP_CHECK, &bd, 20));
    gate_free(plain);
    gate_free(audited);
    unlink(log);
    /* For bench/compare.mjs: the gate's share of an action's latency. */
    char out[4200];
    snprintf(out, sizeof out, "%s/gate.json", dir);
    FILE *jf = fopen(out, "w");
    if (jf) {
        fprintf(jf, "{\"check_us\":%.3f,\"check_audit_us\":%.3f}\n", check_us, audit_us);
        fclose(jf);
    }
    return 0;
}
