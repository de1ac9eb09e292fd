/*
 * main.c — cdpgate's entry point: global options, subcommand dispatch, help.
 * Diagnostics go to stderr; results to stdout.
 */
#include "cli/cli.h"
#include "live/live.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/prctl.h>
#endif

static const char USAGE[] =
"usage: cdpgate [options] <command> [args]\n"
"\n"
"Drive a real, locally installed Chromium, Chrome, Edge or Electron browser\n"
"over the Chrome DevTools Protocol.\n"
"\n"
"commands:\n"
"  doctor                find the browser, launch it over the pipe and over a\n"
"                        port, attach, and report what works\n"
"  eval URL EXPR         open URL, evaluate the JavaScript expression EXPR and\n"
"                        print its value as JSON on stdout\n"
"  version               print the browser's Browser.getVersion as JSON\n"
"  snapshot URL          open URL and print the page's snapshot: one line per\n"
"                        element, [eN] refs on actionable ones (the same text\n"
"                        as the MCP tool browser_snapshot)\n"
"  screenshot URL -o FILE\n"
"                        open URL and write a PNG of the viewport to FILE\n"
"                        (--full-page: the whole page)\n"
"  a11y URL... -o DIR    scan each URL for accessibility problems with axe-core\n"
"                        (installed by you: --axe FILE, CDPGATE_AXE, or\n"
"                        ./node_modules/axe-core; `npm install axe-core`), in\n"
"                        every frame; prints a summary per URL and writes\n"
"                        DIR/a11y[-N].json (axe's results) and .html (a report\n"
"                        by WCAG success criterion; docs/a11y.md). Options:\n"
"                        --tags LIST (default wcag2a,wcag2aa,wcag21aa,wcag22aa),\n"
"                        --include SEL, --exclude SEL, --frame-timeout MS,\n"
"                        --scan-timeout MS; `cdpgate mcp` offers the tool\n"
"                        browser_a11y_scan when the grant names a11y_scan\n"
"  mcp                   serve the Model Context Protocol on stdin/stdout\n"
"                        (JSON-RPC, one message per line; tools browser_*; the\n"
"                        browser starts on the first tool call; docs/mcp.md)\n"
"  replay TRAIL [--var name=value]... [--var-file FILE] [--var-stdin]\n"
"                        play a recorded trail again with no model, through\n"
"                        the gate; prints one JSON object (exit 4 diverged,\n"
"                        5 refused, 6 stopped by the gate, 7 outcome unknown;\n"
"                        docs/replay.md); --from N, --dry-run; --update N FILE\n"
"                        heals step N with FILE's last step (the old kept);\n"
"                        --var is visible to other local users (ps): secrets\n"
"                        by --var-file FILE (0600) or --var-stdin;\n"
"                        --accept-agent-steps plays steps the model wrote\n"
"  vault list|rm|export|import\n"
"                        the encrypted session store: list sessions, remove\n"
"                        one, move one between machines sealed with a\n"
"                        passphrase, import a Playwright storageState file\n"
"                        (cdpgate vault --help)\n"
"  login URL             hand a login to the human: a visible browser window\n"
"                        opens on URL in its own browser context; when the\n"
"                        login page is gone (or on Enter here) the session's\n"
"                        cookies and localStorage are sealed into the vault\n"
"                        under the identity --grant names for it (else\n"
"                        \"default\"); later runs whose grant names that\n"
"                        identity restore them. With no display (or --live)\n"
"                        the browser runs headless and the person logs in\n"
"                        through the live view (its link: --live-notify,\n"
"                        --confirm's program, else stderr)\n"
"  policy                what the gate enforces under --grant FILE (or with no\n"
"                        grant), and the v1 exclusions it does not enforce\n"
"  evidence verify DIR   check an evidence folder (--evidence): each record's\n"
"                        digest, the chain, the screenshots, the manifest;\n"
"                        exit 1 when it does not verify (docs/evidence.md)\n"
"  demo                  walk the embedded demo site step by step: open,\n"
"                        snapshot, click, type, a popup, a dialog\n"
"  help                  this text\n"
"\n";

static const char USAGE_OPTIONS[] =
"options (before or after the command):\n"
"  --browser PATH        browser executable (default: $CDPGATE_BROWSER, then\n"
"                        chromium, google-chrome, microsoft-edge on PATH and\n"
"                        the usual install paths)\n"
"  --connect URL         attach to a running browser instead of launching one:\n"
"                        ws://HOST:PORT/devtools/browser/ID or http://HOST:PORT\n"
"  --port                launch with --remote-debugging-port=0 instead of the\n"
"                        pipe (the pipe opens no TCP port; it is the default)\n"
"  --headed              show a browser window (needs a display)\n"
"  --browser-arg ARG     pass ARG to the launched browser (repeatable), e.g.\n"
"                        --browser-arg=--host-resolver-rules=\"MAP *.test 127.0.0.1\"\n"
"  --grant FILE          the task grant: tools, origins, recipients, file\n"
"                        scopes, egress, identities, expiry (docs/gate.md);\n"
"                        without one: the open web, no stored sessions\n"
"  --audit FILE          append one JSON line per gate decision, mode change,\n"
"                        outcome and refused page request to FILE\n"
"  --confirm CMD         confirmation program: the request as JSON on stdin,\n"
"                        {\"decision\":\"allow\"|\"deny\"} on stdout; anything\n"
"                        else, or no answer in 120 s, is a deny\n"
"  --record FILE         record each action that passes the gate and succeeds\n"
"                        as a step of the trail FILE (JSON Lines, mode 0600;\n"
"                        an existing trail is continued; docs/replay.md)\n"
"  --record-dir DIR      mcp: browser_record may record trails DIR/NAME.trail\n"
"  --param-typed         recording: typed texts become parameters {{name}}\n"
"  --trail-key FILE      recording, replay: the trail key a target's hidden\n"
"                        identifiers are hashed under (never in a trail; by\n"
"                        default $CDPGATE_TRAIL_KEY, else trail-key in the\n"
"                        vault's directory, made 0600 at the first recording)\n"
"  --evidence DIR        mcp replay a11y snapshot screenshot, eval --grant\n"
"                        (before the command): the session as evidence in\n"
"                        DIR/TASK-TIME-PID: navigations, actions, gate\n"
"                        decisions, takeovers, errors, network metadata,\n"
"                        shots, a11y reports; secrets masked; hash-chained\n"
"                        (cdpgate evidence verify; docs/evidence.md)\n"
"  --a11y-dir DIR        mcp: where browser_a11y_scan writes its reports\n"
"  --timeout MS          deadline for each step (default 30000)\n"
"  -o, --output FILE     screenshot: the PNG file to write\n"
"  --full-page           screenshot: the whole page, not only the viewport\n"
"  --max-bytes N         screenshot: at most N bytes, downscaled or JPEG past\n"
"                        it (default: the PNG as taken, no cap)\n"
"  --max-message BYTES   mcp: longest accepted message (default 4194304); a\n"
"                        longer line is answered with an error and skipped\n"
"  --login-done-fd N     mcp: a byte on fd N says the human finished the\n"
"                        login that browser_login handed over\n"
"  --control-fd N        mcp: the host's control channel: lines \"takeover\",\n"
"                        \"pause\" and \"release\" on fd N move control between\n"
"                        the human and the agent (each bumps the epoch)\n"
"  --takeover-headless   mcp: let browser_takeover hand a headless browser to\n"
"                        a person (the host shows the page another way); a\n"
"                        takeover is always confirmed by the person first\n"
"  -h, --help            this text\n"
"  --version             print cdpgate's version\n";

/* Exit codes and the environment, apart: one string has a size limit. */
static const char USAGE_ENV[] =
"\n"
"exit codes: 0 ok, 1 the task failed (script threw, navigation failed),\n"
"2 bad command line (or a bad grant, or an audit log that cannot be opened),\n"
"3 browser missing, unreachable, or died.\n"
"\n"
"environment: CDPGATE_BROWSER (browser path), TMPDIR (temporary profiles),\n"
"XDG_DATA_HOME (the vault is $XDG_DATA_HOME/cdpgate), CDPGATE_KEY_CMD (a\n"
"command printing the vault key), CDPGATE_TRAIL_KEY (--trail-key),\n"
"CDPGATE_TIMING=1 (timestamps on stderr, for benchmarks), CDPGATE_WALKER=0\n"
"(snapshots from the accessibility tree only; by default a single-frame page\n"
"is read by cdpgate's in-page walker).\n"
"\n"
"A launched browser gets a fresh temporary profile that is removed on exit,\n"
"and never outlives cdpgate, even when cdpgate is killed.\n";

/* The sweep (issue 16, point 4), apart: one string has a size limit. */
static const char USAGE_SWEEP[] =
"\nmany accessibility scans (docs/a11y.md, \"A sweep\"):\n"
"  a11y --sweep TARGETS -o DIR [--jobs N]\n"
"                        scan many targets, each in a fresh session of its\n"
"                        own (browser contexts of its own on the sweep's one\n"
"                        browser), N at once (default 2): TARGETS\n"
"                        is JSON Lines, {\"url\":..., \"id\":..., \"identity\":\n"
"                        ..., \"trail\":...} a line (a vault identity the grant\n"
"                        names; a replay trail played to reach the page).\n"
"                        Progress on stderr; a failed target is recorded and\n"
"                        the sweep goes on; DIR/ID/ holds each report and\n"
"                        status, DIR/index.json and index.html the table; run\n"
"                        it again to finish: done targets are skipped\n"
"                        (docs/a11y.md); --evidence DIR records each\n"
"                        target's session in DIR/ID/\n";

/* The live view's options (issue 15), apart: one string has a size limit. */
static const char USAGE_LIVE[] =
"\nthe live view for a human takeover (issue 15; docs/takeover.md):\n"
"  --live                mcp: a takeover (browser_takeover, or a password,\n"
"                        one-time code or challenge the gate stops at on an\n"
"                        origin the grant names an identity for: the person\n"
"                        signs in in a browser context of its own) opens\n"
"                        the live view: cdpgate serves the tab on 127.0.0.1\n"
"                        for a person, who hands control back from it. The\n"
"                        link goes out of band, never to the model: a URL\n"
"                        elicitation when the client supports it, else\n"
"                        --live-notify, else --confirm's program, else stderr.\n"
"                        login, browser_login: the person logs in through\n"
"                        the live view (the default with no display)\n"
"  --live-notify PROG    mcp, login: run PROG (sh -c) with the link on stdin,\n"
"                        CDPGATE_LIVE_KIND=control (the person's) or watch\n"
"                        (a read-only watch link) in its environment\n"
"  --live-ttl SECONDS    mcp, login: the link's lifetime (default 600)\n"
"  --live-bind ADDR      mcp, login: serve the view on ADDR (an IP address;\n"
"                        default 127.0.0.1). Beyond loopback only with\n"
"  --live-insecure       which says you accept clear text (no TLS: the link\n"
"                        and the screen can be read on the network); cdpgate\n"
"                        prints a warning. Use an SSH tunnel where you can\n"
"  --live-host NAME      the host name the link names and the view accepts\n"
"                        (needed with 0.0.0.0 or ::)\n"
"  --control-fd N        mcp: a line \"watch\" while the live view runs issues\n"
"                        a read-only watch link, delivered as the person's\n";

static void usage(FILE *f)
{
    fputs(USAGE, f);
    fputs(USAGE_OPTIONS, f);
    fputs(USAGE_ENV, f);
    fputs(USAGE_SWEEP, f);
    fputs(USAGE_LIVE, f);
}

/* The options before the command line: defaults and the environment. */
static void opts_defaults(cli_opts *o, long long t0)
{
    memset(o, 0, sizeof *o);
    o->timeout_ms = 30000;
    o->login_done_fd = -1;  /* login handoff (cli/login.c) */
    o->control_fd = -1;     /* control epochs (cli/mcp_serve.c) */
    const char *t = getenv("CDPGATE_TIMING");
    o->timing = t && *t == '1';
    const char *wk = getenv("CDPGATE_WALKER");
    o->ax_tree = wk && *wk == '0';
    if (o->timing)
        fprintf(stderr, "timing: main_ns=%lld\n", t0);
}

/* For benchmarks: the driver's own peak resident set (not the browser's). */
static void print_peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            fprintf(stderr, "timing: vmhwm_kb=%ld\n", strtol(line + 6, NULL, 10));
    if (f)
        fclose(f);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || v < 64 || v > (1ULL << 30))
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > 3600000)
        return -1;
    *out = (int)v;
    return 0;
}

/* --live, --live-notify PROG, --live-ttl SECONDS, --live-bind ADDR,
 * --live-host NAME, --live-insecure (the live view, issue 15): 1 when a
 * was one of them (its value taken from val or argv[++*i]), 0 when not, -1
 * after printing a usage error. */
static int live_opt(cli_opts *o, const char *a, const char *val, int argc, char **argv, int *i)
{
    if (strcmp(a, "--live") == 0) {
        o->live = true;
        return 1;
    }
    if (strcmp(a, "--live-insecure") == 0) {
        o->live_insecure = true;
        return 1;
    }
    bool notify = strcmp(a, "--live-notify") == 0, ttl = strcmp(a, "--live-ttl") == 0;
    bool bind = strcmp(a, "--live-bind") == 0, host = strcmp(a, "--live-host") == 0;
    if (!notify && !ttl && !bind && !host)
        return 0;
    if (!val && *i + 1 >= argc) {
        fprintf(stderr, "cdpgate: %s needs a value\n", a);
        return -1;
    }
    if (!val)
        val = argv[++*i];
    if (notify || bind || host) {
        *(notify ? &o->live_notify : bind ? &o->live_bind : &o->live_host) = val;
        return 1;
    }
    if (parse_int(val, &o->live_ttl_s) || o->live_ttl_s < 10 || o->live_ttl_s > 86400) {
        fprintf(stderr, "cdpgate: --live-ttl wants seconds (10..86400), not '%s'\n", val);
        return -1;
    }
    return 1;
}

/* --live-bind beyond loopback without --live-insecure is refused at start
 * (not at the first takeover, where the agent would be told): the view
 * has no TLS. 0, or -1 after printing why. */
static int live_bind_check(const cli_opts *o)
{
    if (!o->live_bind || o->live_insecure || live_addr_loopback(o->live_bind))
        return 0;
    fprintf(stderr, "cdpgate: --live-bind %s is beyond loopback: the live view has no TLS, so "
            "the link, the session and what the person types would cross the network in clear "
            "text. Add --live-insecure to accept that (or reach 127.0.0.1 through an SSH "
            "tunnel)\n", o->live_bind);
    return -1;
}

/* --control-fd, --login-done-fd: a descriptor number >= 3. */
static int parse_fd(const char *opt, const char *s, int *out)
{
    char *end;
    long fd = strtol(s, &end, 10);
    if (!*s || *end || fd < 3 || fd > 65535) {
        fprintf(stderr, "cdpgate: %s wants a descriptor >= 3\n", opt);
        return -1;
    }
    *out = (int)fd;
    return 0;
}

/* The accessibility scan's options (cli/a11y_cmd.c), each with a value. */
static bool a11y_opt(const char *a)
{
    static const char *const OPTS[] = {"--axe", "--tags", "--include", "--exclude",
                                       "--frame-timeout", "--scan-timeout", "--a11y-dir",
                                       "--sweep", "--jobs"};
    for (size_t i = 0; i < sizeof OPTS / sizeof OPTS[0]; i++)
        if (strcmp(a, OPTS[i]) == 0)
            return true;
    return false;
}

static int a11y_set(cli_opts *o, const char *a, const char *val)
{
    if (strcmp(a, "--axe") == 0) {
        o->axe = val;
    } else if (strcmp(a, "--tags") == 0) {
        o->a11y_tags = val;
    } else if (strcmp(a, "--a11y-dir") == 0) {
        o->a11y_dir = val;
    } else if (strcmp(a, "--sweep") == 0) {
        o->a11y_sweep = val;
    } else if (strcmp(a, "--jobs") == 0) {
        if (parse_int(val, &o->a11y_jobs) || o->a11y_jobs > 16) {
            fprintf(stderr, "cdpgate: --jobs wants 1..16, not '%s'\n", val);
            return -1;
        }
    } else if (strcmp(a, "--include") == 0 || strcmp(a, "--exclude") == 0) {
        bool inc = a[3] == 'n';
        size_t *n = inc ? &o->a11y_ninclude : &o->a11y_nexclude;
        if (*n == 32) {
            fprintf(stderr, "cdpgate: at most 32 %s\n", a);
            return -1;
        }
        (inc ? o->a11y_include : o->a11y_exclude)[(*n)++] = val;
    } else if (parse_int(val, a[2] == 'f' ? &o->a11y_frame_ms : &o->a11y_cap_ms)) {
        fprintf(stderr, "cdpgate: %s wants milliseconds (1..3600000), not '%s'\n", a, val);
        return -1;
    }
    return 0;
}

/* Run the command pos[0] (pos ends with NULL); its exit code. */
static int main_command(cli_opts *o, int npos, char **pos)
{
    const char *cmd = pos[0];
    int rc;
    if (strcmp(cmd, "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    } else if (strcmp(cmd, "doctor") == 0) {
        rc = cli_doctor(o, npos, pos);
    } else if (strcmp(cmd, "eval") == 0) {
        rc = cli_eval(o, npos, pos);
    } else if (strcmp(cmd, "version") == 0) {
        rc = cli_version(o, npos, pos);
    } else if (strcmp(cmd, "demo") == 0) {
        rc = cli_demo(o, npos, pos);
    } else if (strcmp(cmd, "snapshot") == 0) {
        rc = cli_snapshot(o, npos, pos);
    } else if (strcmp(cmd, "screenshot") == 0) {
        rc = cli_screenshot(o, npos, pos);
    } else if (strcmp(cmd, "a11y") == 0) {
        rc = cli_a11y(o, npos, pos);
    } else if (strcmp(cmd, "mcp") == 0) {
        rc = cli_mcp(o, npos, pos);
    } else if (strcmp(cmd, "login") == 0) {
        rc = cli_login(o, npos, pos);
    } else if (strcmp(cmd, "policy") == 0) {
        rc = cli_policy(o, npos, pos);
    } else if (strcmp(cmd, "evidence") == 0) {
        rc = cli_evidence(o, npos, pos);
    } else {
        fprintf(stderr, "cdpgate: unknown command '%s' (see cdpgate --help)\n", cmd);
        return EXIT_USAGE;
    }
    if (o->timing)
        print_peak_rss();
    return rc;
}

/* What the program sets for its own process (a library never does). */
static void process_setup(void)
{
#if defined(M_MMAP_THRESHOLD)
    /* glibc raises its mmap threshold to the size of each mapped block
     * freed, after which a snapshot's big arrays (the AX records, the view
     * tree, a few hundred KB to a few MB each, allocated once and freed
     * whole) land in the heap, where they fragment it and stay resident.
     * A fixed threshold keeps them mapped, returned to the system on free. */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
#endif
#if defined(__linux__)
    /* The browser's helpers orphaned when it dies become this program's
     * children, so the library's teardown reaps them and knows at once when
     * they are gone (issue 14: exit took 2 s waiting on zombies init had not
     * reaped). Set by the program, never by the library: a subreaper is a
     * process-wide role an embedder must choose itself. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
    signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
    long long t0 = base_now_ns();
    process_setup();
    cli_opts o;
    opts_defaults(&o, t0);

    /* Options may come before or after the command; positionals in order. */
    char *pos[64];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        const char *val = NULL;
        char *eq = NULL;
        if (a[0] == '-' && a[1] == '-' && (eq = strchr(a, '=')))
            *eq = 0, val = eq + 1;
#define NEEDVAL() do { \
        if (!val) { \
            if (i + 1 >= argc) { \
                fprintf(stderr, "cdpgate: %s needs a value\n", a); \
                return EXIT_USAGE; \
            } \
            val = argv[++i]; \
        } } while (0)
        int lv = live_opt(&o, a, val, argc, argv, &i);
        if (lv < 0)
            return EXIT_USAGE;
        if (lv > 0)
            continue;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return EXIT_OK;
        } else if (strcmp(a, "--version") == 0) {
            printf("cdpgate %s\n", CDPGATE_VERSION);
            return EXIT_OK;
        } else if (strcmp(a, "--browser") == 0) {
            NEEDVAL();
            o.browser = val;
        } else if (strcmp(a, "--connect") == 0) {
            NEEDVAL();
            o.connect = val;
        } else if (strcmp(a, "--port") == 0) {
            o.use_port = true;
        } else if (strcmp(a, "--headed") == 0) {
            o.headed = true;
        } else if (strcmp(a, "--takeover-headless") == 0) {
            o.takeover_headless = true;
        } else if (strcmp(a, "--browser-arg") == 0) {
            NEEDVAL();
            if (o.nargs == 31) {
                fprintf(stderr, "cdpgate: too many --browser-arg\n");
                return EXIT_USAGE;
            }
            o.args[o.nargs++] = val;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            NEEDVAL();
            o.output = val;
        } else if (strcmp(a, "--full-page") == 0) {
            o.full_page = true;
        } else if (strcmp(a, "--max-bytes") == 0) {
            NEEDVAL();
            if (parse_size(val, &o.max_bytes)) {
                fprintf(stderr, "cdpgate: --max-bytes wants bytes (64..1073741824), "
                        "not '%s'\n", val);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--max-message") == 0) {
            NEEDVAL();
            if (parse_size(val, &o.max_message)) {
                fprintf(stderr, "cdpgate: --max-message wants bytes (64..1073741824), "
                        "not '%s'\n", val);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--control-fd") == 0) {
            NEEDVAL();
            if (parse_fd(a, val, &o.control_fd))
                return EXIT_USAGE;
        } else if (strcmp(a, "--login-done-fd") == 0) {
            /* login handoff (cli/login.c, cli/mcp_serve.c) */
            NEEDVAL();
            if (parse_fd(a, val, &o.login_done_fd))
                return EXIT_USAGE;
        } else if (strcmp(a, "--record") == 0) {
            NEEDVAL();
            o.record = val;
        } else if (strcmp(a, "--record-dir") == 0) {
            NEEDVAL();
            o.record_dir = val;
        } else if (strcmp(a, "--evidence") == 0) {
            NEEDVAL();
            o.evidence = val;
        } else if (strcmp(a, "--param-typed") == 0) {
            o.param_typed = true;
        } else if (strcmp(a, "--trail-key") == 0) {
            /* every recorder and replay of this process (and of the
             * processes it starts) reads it: replay_key_load */
            NEEDVAL();
            if (!*val || setenv("CDPGATE_TRAIL_KEY", val, 1) != 0) {
                fprintf(stderr, "cdpgate: --trail-key needs a file\n");
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--grant") == 0) {
            NEEDVAL();
            o.grant = val;
        } else if (strcmp(a, "--audit") == 0) {
            NEEDVAL();
            o.audit = val;
        } else if (strcmp(a, "--confirm") == 0) {
            NEEDVAL();
            o.confirm = val;
        } else if (a11y_opt(a)) {
            NEEDVAL();
            if (a11y_set(&o, a, val))
                return EXIT_USAGE;
        } else if (strcmp(a, "--timeout") == 0) {
            NEEDVAL();
            if (parse_int(val, &o.timeout_ms)) {
                fprintf(stderr, "cdpgate: --timeout wants milliseconds (1..3600000), "
                        "not '%s'\n", val);
                return EXIT_USAGE;
            }
        } else if (a[0] == '-' && a[1] == '-' && a[2]) {
            fprintf(stderr, "cdpgate: unknown option %s (see cdpgate --help)\n", a);
            return EXIT_USAGE;
        } else {
            if (npos == 63) {
                fprintf(stderr, "cdpgate: too many arguments\n");
                return EXIT_USAGE;
            }
            pos[npos++] = a;
            /* `vault` parses its own options (cli/vault_cmd.c). */
            if (npos == 1 && strcmp(a, "vault") == 0)
                return cli_vault(&o, argc - i, argv + i);
            /* `replay` too (--var; cli/replay_cmd.c). */
            if (npos == 1 && strcmp(a, "replay") == 0)
                return cli_replay(&o, argc - i, argv + i);
        }
#undef NEEDVAL
    }
    pos[npos] = NULL;
    if (npos == 0) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (live_bind_check(&o) != 0)
        return EXIT_USAGE;
    return main_command(&o, npos, pos);
}
