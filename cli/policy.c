/*
 * policy.c — the gate as the command line sets it up: --grant FILE (the
 * task grant), --audit FILE (the audit log, overriding the grant's),
 * --confirm CMD (the confirmation program), the TTY prompt of the
 * interactive commands, and `cdpgate policy` (what is enforced, and the v1
 * exclusions that are not).
 *
 * The confirmation program: `sh -c CMD` gets the request as one JSON object
 * on stdin and must print one JSON object on stdout within the wait
 * (CLI_CONFIRM_WAIT_MS): {"decision":"allow"} or {"decision":"deny",
 * "reason":"..."}. Anything else — no answer in time, a crash, a non-zero
 * exit, garbage, another word — is a deny, and the program is killed.
 */
#include "cli/cli.h"
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gate/gate.h"
#include "json/json.h"

#define CLI_CONFIRM_WAIT_MS 120000
#define CLI_CONFIRM_MAX 65536

/* Run cmd with prompt on stdin; the decision from its stdout. */
int cli_confirm_program(const char *cmd, const char *prompt, int wait_ms, char *why,
                        size_t cap)
{
    return cli_confirm_program_tick(cmd, prompt, wait_ms, NULL, NULL, why, cap);
}

/* The environment of a program run with env ("NAME=VALUE") added: this
 * process's, any NAME= of it dropped (new array of borrowed strings; NULL
 * when out of memory). Built before the fork: the child only execs. */
static char **confirm_env(const char *env)
{
    extern char **environ;
    size_t n = 0, name = strcspn(env, "=") + 1;
    while (environ && environ[n])
        n++;
    char **e = calloc(n + 2, sizeof *e);
    size_t k = 0;
    for (size_t i = 0; e && i < n; i++)
        if (strncmp(environ[i], env, name) != 0)
            e[k++] = environ[i];
    if (e)
        e[k] = (char *)env;
    return e;
}

/* Start sh -c cmd (env added to its environment when not NULL) with pipes
 * to its stdin (*in) and from its stdout (*out): its pid, or -1. */
static pid_t confirm_spawn(const char *cmd, const char *env, int *in, int *out)
{
    int pi[2], po[2];
    char **envp = env ? confirm_env(env) : NULL;
    if ((env && !envp) || pipe(pi) != 0) {
        free(envp);
        return -1;
    }
    if (pipe(po) != 0) {
        close(pi[0]);
        close(pi[1]);
        free(envp);
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pi[0], 0);
        dup2(po[1], 1);
        close(pi[0]); close(pi[1]); close(po[0]); close(po[1]);
        setpgid(0, 0);
        char *const argv[] = {"sh", "-c", (char *)cmd, NULL};
        if (envp)
            execve("/bin/sh", argv, envp);
        else
            execv("/bin/sh", argv);
        _exit(127);
    }
    free(envp);
    close(pi[0]);
    close(po[1]);
    if (pid < 0) {
        close(pi[1]);
        close(po[0]);
        return -1;
    }
    *in = pi[1];
    *out = po[0];
    return pid;
}

int cli_confirm_program_tick(const char *cmd, const char *prompt, int wait_ms,
                             bool (*tick)(void *ud), void *tick_ud, char *why, size_t cap)
{
    return cli_program_run(cmd, prompt, NULL, wait_ms, tick, tick_ud, why, cap);
}

int cli_program_run(const char *cmd, const char *prompt, const char *env, int wait_ms,
                    bool (*tick)(void *ud), void *tick_ud, char *why, size_t cap)
{
    int in = -1, out = -1;
    pid_t pid = confirm_spawn(cmd, env, &in, &out);
    if (pid < 0) {
        snprintf(why, cap, "cannot run the confirmation program");
        return GATE_DENY;
    }
    /* The prompt is small (well under a pipe buffer): write it and close. */
    signal(SIGPIPE, SIG_IGN);
    base_write_all(in, prompt, strlen(prompt), BASE_NO_DEADLINE, 0, NULL);
    if (write(in, "\n", 1) < 0) {
        /* the program may not read its stdin: fine */
    }
    close(in);
    char *buf = malloc(CLI_CONFIRM_MAX + 1);
    size_t got = 0;
    int64_t deadline = base_now_ms() + wait_ms;
    bool timed_out = false, stopped = false;
    while (buf && got < CLI_CONFIRM_MAX) {
        int64_t left = deadline - base_now_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        /* The host's tick (its control channel, its browser) runs while the
         * human decides; it may call the question off. */
        if (tick && tick(tick_ud)) {
            stopped = true;
            break;
        }
        struct pollfd p = {out, POLLIN, 0};
        int pr = poll(&p, 1, tick && left > 100 ? 100 : (int)left);
        if (pr == 0 && tick)
            continue;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            timed_out = pr == 0;
            break;
        }
        ssize_t n = read(out, buf + got, CLI_CONFIRM_MAX - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(out);
    /* The program must also exit within the wait (it may have closed its
     * stdout and gone on running). */
    int status = 0;
    bool reaped = false;
    while (!timed_out && !stopped && !reaped) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) {
            reaped = true;
        } else if (w < 0 && errno != EINTR) {
            break;
        } else if (base_now_ms() >= deadline) {
            timed_out = true;
        } else {
            struct timespec ts = {0, 5 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    if (!reaped) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    int d = GATE_DENY;
    if (!buf) {
        snprintf(why, cap, "out of memory");
    } else if (stopped) {
        snprintf(why, cap, "the question was called off: control changed while it was open");
    } else if (timed_out) {
        snprintf(why, cap, "the confirmation program gave no answer within %d ms", wait_ms);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(why, cap, "the confirmation program failed (exit %d)",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    } else {
        json_doc *doc = json_parse(buf, got, NULL, NULL);
        const json_val *root = doc ? json_doc_root(doc) : NULL;
        const char *dec = json_get_str(root, "decision");
        const char *reason = json_get_str(root, "reason");
        if (dec && strcmp(dec, "allow") == 0) {
            d = GATE_ALLOW;
            snprintf(why, cap, "%s", reason ? reason : "allowed by the confirmation program");
        } else if (dec && strcmp(dec, "deny") == 0) {
            snprintf(why, cap, "%s", reason ? reason : "denied by the confirmation program");
        } else {
            snprintf(why, cap, "the confirmation program's answer was not "
                     "{\"decision\":\"allow\"|\"deny\"}");
        }
        json_doc_free(doc);
    }
    free(buf);
    return d;
}

static int confirm_cmd_hook(void *ud, const char *prompt, char *why, size_t cap)
{
    return cli_confirm_program(ud, prompt, CLI_CONFIRM_WAIT_MS, why, cap);
}

/* The TTY prompt: the gate's message (its verdict first, page text escaped
 * after a separator), then y/N from /dev/tty (not stdin, which a page or a
 * pipe could feed). No message: nothing to show, a deny. */
static int confirm_tty_hook(void *ud, const char *prompt, char *why, size_t cap)
{
    (void)ud;
    json_doc *jd = json_parse(prompt, strlen(prompt), NULL, NULL);
    const char *msg = json_get_str(jd ? json_doc_root(jd) : NULL, "message");
    FILE *tty = msg ? fopen("/dev/tty", "r+") : NULL;
    if (!tty) {
        json_doc_free(jd);
        snprintf(why, cap, "%s", msg ? "no terminal to ask" : "the request had no message");
        return GATE_DENY;
    }
    fprintf(tty, "\n%s [y/N] ", msg);
    json_doc_free(jd);
    fflush(tty);
    char line[16] = "";
    int d = GATE_DENY;
    if (fgets(line, sizeof line, tty) && (line[0] == 'y' || line[0] == 'Y')) {
        d = GATE_ALLOW;
        snprintf(why, cap, "allowed at the terminal");
    } else {
        snprintf(why, cap, "denied at the terminal");
    }
    fclose(tty);
    return d;
}

gate *cli_gate_open(const cli_opts *o, bool interactive, const char *cmd)
{
    gate_grant *g = NULL;
    gate_err ge = {{0}};
    if (o->grant && gate_grant_load(o->grant, &g, &ge) != 0) {
        fprintf(stderr, "cdpgate %s: %s\n", cmd, ge.msg);
        return NULL;
    }
    gate_opts go = {0};
    go.audit = o->audit;
    if (o->confirm) {
        go.confirm = confirm_cmd_hook;
        go.confirm_ud = (void *)o->confirm;
    } else if (interactive && isatty(2)) {
        go.confirm = confirm_tty_hook;
    }
    gate *gt = gate_new(g, &go, &ge);
    gate_grant_free(g);
    if (!gt)
        fprintf(stderr, "cdpgate %s: %s\n", cmd, ge.msg);
    return gt;
}

int cli_policy(const cli_opts *o, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    gate *gt = cli_gate_open(o, false, "policy");
    if (!gt)
        return EXIT_USAGE;
    const gate_grant *g = gate_grant_get(gt);
    if (!g) {
        printf("grant: none (the open web in the untrusted context; no stored session is "
               "restored; no eval, no upload)\n");
    } else {
        printf("grant: task %s, principal %s\n", g->task ? g->task : "-",
               g->principal ? g->principal : "-");
        printf("  tools:");
        if (!g->ntools)
            printf(" (default set)");
        for (size_t i = 0; i < g->ntools; i++)
            printf(" %s", g->tools[i]);
        printf("\n  origins:");
        for (size_t i = 0; i < g->norigins; i++)
            printf(" %s", g->origins[i]);
        printf("\n  recipients: %zu, file scopes: %zu, identities: %zu, bound rules: %zu\n",
               g->nrecipients, g->nfile_scopes, g->nidentities, g->nbound);
        printf("  egress:%s%s%s%s (%s)\n", g->egress ? "" : " none",
               g->egress & GATE_EGRESS_FETCH ? " approved_origin_fetch" : "",
               g->egress & GATE_EGRESS_SEND ? " structured_send" : "",
               g->egress & GATE_EGRESS_FILE ? " file_transfer" : "",
               g->egress_field == GATE_EGRESS_FIELD_CLASSES ? "read from egress_classes"
               : g->egress_field == GATE_EGRESS_FIELD_EGRESS ? "read from egress"
                                                             : "no egress field: none");
        if (g->expires)
            printf("  expires: %lld (unix seconds)\n", (long long)g->expires);
    }
    printf("enforced: grant (tools, origins, recipients, file scopes, egress, identities, "
           "expiry); action classes (read, interact, authenticated state change -> confirm, "
           "consequential -> unbound_stop, credential/challenge -> human takeover); control "
           "epochs; under a grant, every document request (navigations, redirects, popups, "
           "frames, form posts) judged before it leaves; audit log\n");
    printf("not enforced in v1 (named exclusions):\n");
    for (const char *const *x = gate_exclusions(); *x; x++)
        printf("  %s\n", *x);
    gate_free(gt);
    return EXIT_OK;
}
