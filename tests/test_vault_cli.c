/*
 * test_vault_cli.c — `cdpgate vault list|rm|export|import` through the
 * binary ($CDPGATE_BIN, else build/cdpgate), each test in a fresh temporary
 * $XDG_DATA_HOME (the default key file created there, or CDPGATE_KEY_CMD).
 *
 *   - list (text and --json, expired sessions, escaped identities), rm;
 *   - export/import round trips into a second store with another key
 *     (identity, capture time, expiry and the session bytes preserved), the
 *     passphrase from --passphrase-fd (a here-document and a file on fd 3)
 *     and from a pseudo-terminal (posix_openpt: echo off, asked twice on
 *     export, a mismatch refused); no terminal at all is a clear error;
 *   - no option and no environment variable carries a passphrase;
 *   - wrong passphrase, tampered and truncated exports: refused, nothing
 *     written; export files are 0600 and never clobbered without --force;
 *   - Playwright storageState import: HttpOnly/Secure/SameSite/partitioned
 *     cookies over several origins, domain and host-only cookies, cookies
 *     without an origin entry, expired ones; the stored blobs are checked
 *     against session state format v1; bad JSON, duplicate keys, oversized,
 *     too deep and malformed files are refused and store nothing;
 *   - list never runs the key command;
 *   - every stdout, stderr and terminal transcript of every command is
 *     searched for the planted cookie and localStorage values, the
 *     passphrases and the vault key: none may appear.
 */
#define _GNU_SOURCE 1
#include "tests/fixture.h"
#include "tests/harness.h"
#include "tests/testlib.h"
#include "json/json.h"
#include "vault/vault.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* environment: a temporary data directory per test */

static char tmpdir[64];       /* $TMPDIR/cdpgate-vcli-XXXXXX */
static char datadir[128];     /* tmpdir/data: $XDG_DATA_HOME */
static const char *bin;

/* Everything any command printed during the current test. */
static char *transcript;
static size_t tlen;

static void transcript_add(const char *s)
{
    if (!s)
        return;
    size_t n = strlen(s);
    char *t = realloc(transcript, tlen + n + 2);
    if (!t)
        return;
    transcript = t;
    memcpy(transcript + tlen, s, n);
    tlen += n;
    transcript[tlen++] = '\n';
    transcript[tlen] = 0;
}

static void use_data(const char *sub)
{
    snprintf(datadir, sizeof datadir, "%s/%s", tmpdir, sub);
    mkdir(datadir, 0700);
    setenv("XDG_DATA_HOME", datadir, 1);
}

static void env_setup(void)
{
    if (testlib_tempdir("vcli", tmpdir, sizeof tmpdir))
        test_fail_detail("mkdtemp: %s", strerror(errno));
    unsetenv("CDPGATE_KEY_CMD");
    use_data("data");
    free(transcript);
    transcript = NULL;
    tlen = 0;
    bin = getenv("CDPGATE_BIN");
    if (!bin)
        bin = "build/cdpgate";
}

/* Planted secrets: none may appear in any output. */
static const char *const SECRETS[] = {
    "sidVAL-7f3a9e", "csrfVAL-51c2d0", "prefVAL-c0ffee", "apiVAL-9d8e7f", "oldVAL-1e2d3c",
    "lsVAL-tokenAB12", "lsVAL-themeCD34", "lsVAL-deepEF56", "passVAL-horse battery",
    "passVAL-wrong staple", "dupVAL-aa11", "dupVAL-bb22", "argVAL-pw", "envVAL-pw",
    "ttyVAL-secret pass", "userinfoVAL-pw", "partVAL-4455",
};

/* Check the transcript for every planted secret and the vault key(s). */
static void env_teardown(void)
{
    for (size_t i = 0; i < sizeof SECRETS / sizeof *SECRETS; i++)
        if (transcript && strstr(transcript, SECRETS[i])) {
            CHECK(!"a planted secret appeared in the output");
            test_fail_detail("secret %s found in:\n%s", SECRETS[i], transcript);
        }
    /* In the sanitizer build a report would otherwise pass for exit 1. */
    CHECK(!transcript || !strstr(transcript, "Sanitizer"));
    CHECK(!transcript || !strstr(transcript, "runtime error:"));
    const char *subs[] = {"data", "data2"};
    for (int s = 0; s < 2; s++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s/cdpgate/key", tmpdir, subs[s]);
        size_t n = 0;
        char *k = test_read_file(p, &n);
        if (k && n == 32 && transcript) {
            char hex[65];
            for (int i = 0; i < 32; i++)
                snprintf(hex + 2 * i, 3, "%02x", (unsigned char)k[i]);
            CHECK(strstr(transcript, hex) == NULL);
            CHECK(memmem(transcript, tlen, k, 32) == NULL);
        }
        free(k);
    }
    test_rm_rf(tmpdir);
    free(transcript);
    transcript = NULL;
    tlen = 0;
}

/* ------------------------------------------------------------------ */
/* running the binary */

static char *out_, *err_;

/* Run `bin ARGS` through /bin/sh (stdin /dev/null); keeps stdout and
 * stderr in out_/err_ and the transcript; returns the exit status. */
static int run(const char *fmt, ...)
{
    char args[4096], cmd[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s", bin, args);
    free(out_);
    free(err_);
    out_ = err_ = NULL;
    int rc = fixture_run(cmd, &out_, &err_);
    if (!out_)
        out_ = strdup("");
    if (!err_)
        err_ = strdup("");
    transcript_add(out_);
    transcript_add(err_);
    return rc;
}

static void free_out(void)
{
    free(out_);
    free(err_);
    out_ = err_ = NULL;
}

static bool has(const char *hay, const char *needle)
{
    bool ok = hay && strstr(hay, needle) != NULL;
    if (!ok)
        test_fail_detail("expected \"%s\" in:\n%s", needle, hay ? hay : "(null)");
    return ok;
}

/*
 * Run `sh -c "bin ARGS"` in a new session. With answers (tty mode): a
 * pseudo-terminal becomes its controlling terminal (stdin stays
 * /dev/null), and each time a prompt containing "assphrase" appears on the
 * terminal the next answer is typed. Without (no_tty): it has no
 * controlling terminal at all. Everything the terminal showed goes to
 * *tty. Returns the exit status.
 */
static int run_session(const char *args, const char *const *answers, int nanswers,
                       bool with_tty, char **tty)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "%s %s", bin, args);
    char ofile[] = "/tmp/cdpgate-vcli-outXXXXXX", efile[] = "/tmp/cdpgate-vcli-errXXXXXX";
    int ofd = mkstemp(ofile), efd = mkstemp(efile);
    int master = -1;
    const char *slave = NULL;
    if (with_tty) {
        master = posix_openpt(O_RDWR | O_NOCTTY);
        if (master < 0 || grantpt(master) || unlockpt(master) || !(slave = ptsname(master))) {
            test_fail_detail("posix_openpt: %s", strerror(errno));
            return -1;
        }
    }
    char slave_path[128] = "";
    int hold = -1;     /* a slave descriptor of ours: the master never reads EIO early */
    if (slave) {
        snprintf(slave_path, sizeof slave_path, "%s", slave);
        hold = open(slave_path, O_RDWR | O_NOCTTY);
    }
    pid_t pid = fork();
    if (pid == 0) {
        setsid();
        if (with_tty) {
            int s = open(slave_path, O_RDWR);
            if (s < 0)
                _exit(126);
            ioctl(s, TIOCSCTTY, 0);
            close(s);
            close(master);
            close(hold);
        }
        int nul = open("/dev/null", O_RDONLY);
        dup2(nul, 0);
        dup2(ofd, 1);
        dup2(efd, 2);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    char *t = calloc(1, 1);
    size_t tl = 0;
    int answered = 0, rst = 0;
    bool reaped = false;
    long long deadline = (long long)time(NULL) + 30;
    while (with_tty && time(NULL) < deadline) {
        struct pollfd p = {master, POLLIN, 0};
        int r = poll(&p, 1, 200);
        if (r > 0) {
            char b[512];
            ssize_t n = read(master, b, sizeof b);
            if (n <= 0)
                break;      /* EIO: the child side closed */
            char *nt = realloc(t, tl + (size_t)n + 1);
            if (!nt)
                break;
            t = nt;
            memcpy(t + tl, b, (size_t)n);
            tl += (size_t)n;
            t[tl] = 0;
            int prompts = 0;
            for (const char *q = t; (q = strstr(q, "assphrase")); q++)
                prompts++;
            while (answered < prompts && answered < nanswers) {
                if (!answers[answered]) {     /* NULL: SIGTERM the pid in tmpdir/pid */
                    answered++;
                    char pf[200];
                    snprintf(pf, sizeof pf, "%s/pid", tmpdir);
                    char *ps = test_read_file(pf, NULL);
                    long tp = ps ? strtol(ps, NULL, 10) : 0;
                    free(ps);
                    if (tp > 0)
                        kill((pid_t)tp, SIGTERM);
                    else
                        test_fail_detail("no pid in %s", pf);
                    continue;
                }
                char line[256];
                int ll = snprintf(line, sizeof line, "%s\n", answers[answered++]);
                if (write(master, line, (size_t)ll) != ll)
                    break;
            }
        } else if (r >= 0 && waitpid(pid, &rst, WNOHANG) == pid) {
            reaped = true;
            break;
        }
    }
    int st = 0;
    if (!reaped) {
        bool done = false;
        for (int i = 0; i < 300 && !done; i++) {
            done = waitpid(pid, &st, WNOHANG) == pid;
            if (!done)
                usleep(100000);
        }
        if (!done) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            test_fail_detail("the command hung: %s", args);
        }
    } else {
        st = rst;
    }
    if (master >= 0)
        close(master);
    if (hold >= 0)
        close(hold);
    free(out_);
    free(err_);
    out_ = test_read_file(ofile, NULL);
    err_ = test_read_file(efile, NULL);
    if (!out_)
        out_ = strdup("");
    if (!err_)
        err_ = strdup("");
    close(ofd);
    close(efd);
    unlink(ofile);
    unlink(efile);
    transcript_add(out_);
    transcript_add(err_);
    transcript_add(t);
    if (tty)
        *tty = t;
    else
        free(t);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int run_tty(const char *args, const char *const *answers, int nanswers, char **tty)
{
    return run_session(args, answers, nanswers, true, tty);
}

/* ------------------------------------------------------------------ */
/* the store, from the test's side (same $XDG_DATA_HOME, same key file) */

static vault *store(void)
{
    char err[256];
    vault *v = vault_open(NULL, NULL, err, sizeof err);
    if (!v)
        test_fail_detail("vault_open: %s", err);
    return v;
}

static void put(const char *origin, const char *identity, const char *blob, int64_t expiry)
{
    vault *v = store();
    char err[256];
    if (v && !CHECK_INT(0, vault_put(v, origin, identity, (const uint8_t *)blob, strlen(blob),
                                     expiry, err, sizeof err)))
        test_fail_detail("vault_put: %s", err);
    vault_close(v);
}

/* The stored session of origin, parsed (free with json_doc_free), or NULL. */
static json_doc *get_session(const char *origin, vault_meta *meta)
{
    vault *v = store();
    uint8_t *b = NULL;
    size_t n = 0;
    char err[256];
    json_doc *d = NULL;
    if (v && vault_get(v, origin, &b, &n, meta, err, sizeof err) == 0) {
        json_opts jo = {0, 0, JSON_NO_DUPLICATES};
        d = json_parse((const char *)b, n, &jo, NULL);
        vault_free_blob(b, n);
    } else {
        test_fail_detail("vault_get %s: %s", origin, err);
    }
    vault_close(v);
    return d;
}

/* The cookie named name in a session state, or NULL. */
static const json_val *cookie(const json_doc *d, const char *name)
{
    for (const json_val *c = json_first(json_get(json_doc_root(d), "cookies")); c;
         c = json_next(c))
        if (strcmp(json_get_str(c, "name") ? json_get_str(c, "name") : "", name) == 0)
            return c;
    return NULL;
}

static int count_sessions(void)
{
    int rc = run("vault list --json");
    CHECK_INT(0, rc);
    json_doc *d = json_parse(out_, strlen(out_), NULL, NULL);
    int n = d ? (int)json_len(json_get(json_doc_root(d), "sessions")) : -1;
    json_doc_free(d);
    return n;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static const char SESSION_V1[] =
    "{\"version\":1,\"cookies\":[{\"name\":\"sid\",\"value\":\"sidVAL-7f3a9e\","
    "\"domain\":\"bank.test\",\"path\":\"/\",\"secure\":true,\"httpOnly\":true,"
    "\"sameSite\":\"Lax\",\"expires\":4102444800}],"
    "\"localStorage\":{\"https://bank.test\":[[\"token\",\"lsVAL-tokenAB12\"]]}}";

/* ------------------------------------------------------------------ */
/* tests */

static void t_usage(void)
{
    env_setup();
    CHECK_INT(0, run("vault --help"));
    CHECK(has(out_, "vault list"));
    CHECK(has(out_, "--passphrase-fd"));
    CHECK_INT(0, run("--help"));
    CHECK(has(out_, "vault list|rm|export|import"));
    CHECK_INT(2, run("vault"));
    CHECK_INT(2, run("vault frobnicate"));
    CHECK(has(err_, "frobnicate"));
    CHECK_INT(2, run("vault list extra"));
    CHECK_INT(2, run("vault rm"));
    CHECK_INT(2, run("vault export https://bank.test"));
    CHECK(has(err_, "-o FILE"));
    CHECK_INT(2, run("vault import"));
    CHECK_INT(2, run("vault rm https://bank.test --json"));
    CHECK_INT(2, run("vault list --playwright"));
    CHECK_INT(2, run("vault import f --passphrase-fd x"));
    CHECK_INT(2, run("vault export https://bank.test -o %s/x --frob=argVAL-pw", tmpdir));
    CHECK(has(err_, "--frob"));
    CHECK_INT(2, run("vault export ftp://bank.test -o %s/x", tmpdir));
    free_out();
    env_teardown();
}

static void t_no_passphrase_argument(void)
{
    env_setup();
    put("https://bank.test", "alice", SESSION_V1, 0);
    char f[200];
    snprintf(f, sizeof f, "%s/out.cdpg", tmpdir);
    const char *forms[] = {"--passphrase=argVAL-pw", "--passphrase argVAL-pw",
                           "--password=argVAL-pw", "--pass argVAL-pw", "--pw=argVAL-pw",
                           "--passphrase-file=argVAL-pw", "--secret argVAL-pw"};
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        CHECK_INT(2, run("vault export https://bank.test -o %s %s", f, forms[i]));
        CHECK(access(f, F_OK) != 0);
        CHECK_INT(2, run("vault import %s %s", f, forms[i]));
    }
    CHECK(has(err_, "never taken from the command line"));
    /* Nor from the environment: with no terminal, it is an error even when
     * variables with likely names are set. */
    setenv("CDPGATE_PASSPHRASE", "envVAL-pw", 1);
    setenv("PASSPHRASE", "envVAL-pw", 1);
    char args[400];
    snprintf(args, sizeof args, "vault export https://bank.test -o %s", f);
    CHECK_INT(1, run_session(args, NULL, 0, false, NULL));
    CHECK(has(err_, "no terminal"));
    CHECK(has(err_, "--passphrase-fd"));
    CHECK(access(f, F_OK) != 0);
    unsetenv("CDPGATE_PASSPHRASE");
    unsetenv("PASSPHRASE");
    free_out();
    env_teardown();
}

static void t_list(void)
{
    env_setup();
    CHECK_INT(0, run("vault list"));
    CHECK_STR("", out_);
    CHECK(has(err_, "no stored sessions"));
    CHECK_INT(0, run("vault list --json"));
    CHECK_STR("{\"version\":1,\"sessions\":[]}\n", out_);
    int64_t now = (int64_t)time(NULL);
    put("https://bank.test", "alice@bank.test", SESSION_V1, now + 86400);
    put("https://old.test", "bob", SESSION_V1, now - 10);
    put("https://evil.test", "x\x1b[2Jy", SESSION_V1, 0);
    CHECK_INT(0, run("vault list"));
    CHECK(has(out_, "https://bank.test  identity alice@bank.test  captured "));
    CHECK(has(out_, "https://old.test  identity bob"));
    CHECK(has(out_, "  expired\n"));
    CHECK(has(out_, "expires never"));
    CHECK(has(out_, "identity x\\x1b[2Jy"));
    CHECK(strchr(out_, 0x1b) == NULL);
    int lines = 0;
    for (const char *p = out_; *p; p++)
        lines += *p == '\n';
    CHECK_INT(3, lines);
    /* Sorted by origin: bank, evil, old. */
    CHECK(strstr(out_, "bank.test") < strstr(out_, "evil.test"));
    CHECK(strstr(out_, "evil.test") < strstr(out_, "old.test"));
    CHECK_INT(0, run("vault list --json"));
    json_doc *d = json_parse(out_, strlen(out_), NULL, NULL);
    const json_val *s = json_get(json_doc_root(d), "sessions");
    CHECK_INT(3, json_len(s));
    CHECK_STR("https://bank.test", json_get_str(json_at(s, 0), "origin"));
    CHECK_STR("alice@bank.test", json_get_str(json_at(s, 0), "identity"));
    CHECK_INT(now + 86400, json_get_int(json_at(s, 0), "expiry", -1));
    CHECK(json_type_of(json_get(json_at(s, 0), "expired")) == JSON_FALSE);
    CHECK(json_type_of(json_get(json_at(s, 1), "expiry")) == JSON_NULL);
    CHECK(json_type_of(json_get(json_at(s, 2), "expired")) == JSON_TRUE);
    CHECK(json_get_int(json_at(s, 0), "captured", 0) >= now);
    json_doc_free(d);
    free_out();
    env_teardown();
}

/* list and rm never fetch the key: the key command does not run. */
static void t_list_no_key(void)
{
    env_setup();
    char cmd[400], marker[200];
    snprintf(marker, sizeof marker, "%s/keycmd-ran", tmpdir);
    snprintf(cmd, sizeof cmd, "touch %s; echo "
             "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", marker);
    setenv("CDPGATE_KEY_CMD", cmd, 1);
    put("https://bank.test", "alice", SESSION_V1, 0);
    unlink(marker);
    CHECK_INT(0, run("vault list"));
    CHECK(has(out_, "https://bank.test"));
    CHECK_INT(0, run("vault list --json"));
    CHECK(access(marker, F_OK) != 0);
    char f[200];
    snprintf(f, sizeof f, "%s/e.cdpg", tmpdir);
    CHECK_INT(0, run("vault export https://bank.test -o %s --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", f));
    CHECK(access(marker, F_OK) == 0);      /* export did need the key */
    unlink(marker);
    CHECK_INT(0, run("vault rm https://bank.test"));
    CHECK(access(marker, F_OK) != 0);
    CHECK(transcript && !strstr(transcript, "1a1b1c1d1e1f"));
    unsetenv("CDPGATE_KEY_CMD");
    free_out();
    env_teardown();
}

static void t_rm(void)
{
    env_setup();
    put("https://bank.test", "alice", SESSION_V1, 0);
    put("https://other.test:8443", "", SESSION_V1, 0);
    char name[65], p[400];
    vault_origin_name("https://bank.test", name);
    snprintf(p, sizeof p, "%s/cdpgate/sessions/%s.enc", datadir, name);
    CHECK(access(p, F_OK) == 0);
    /* A URL names its origin: case, default port and path do not matter. */
    CHECK_INT(0, run("vault rm HTTPS://Bank.TEST:443/login?next=/"));
    CHECK(has(out_, "removed https://bank.test"));
    CHECK(access(p, F_OK) != 0);
    snprintf(p, sizeof p, "%s/cdpgate/sessions/%s.json", datadir, name);
    CHECK(access(p, F_OK) != 0);
    CHECK_INT(1, run("vault rm https://bank.test"));
    CHECK(has(err_, "no stored session for https://bank.test"));
    CHECK_INT(1, run("vault rm https://other.test"));
    CHECK_INT(1, run("vault rm https://user:userinfoVAL-pw@other.test:8443"));
    CHECK(has(err_, "user name or password"));
    CHECK_INT(1, count_sessions());
    CHECK_INT(0, run("vault rm https://other.test:8443/"));
    CHECK_INT(0, count_sessions());
    free_out();
    env_teardown();
}

/* Export from one store, import into another with another key. */
static void t_roundtrip(void)
{
    env_setup();
    int64_t exp = (int64_t)time(NULL) + 7 * 86400;
    put("https://bank.test", "alice@bank.test", SESSION_V1, exp);
    vault_meta m0 = {0};
    json_doc *d0 = get_session("https://bank.test", &m0);
    CHECK(d0 != NULL);
    char f[200];
    snprintf(f, sizeof f, "%s/bank.cdpg", tmpdir);
    CHECK_INT(0, run("vault export https://bank.test/ -o %s --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", f));
    CHECK(has(out_, "exported https://bank.test"));
    struct stat st;
    CHECK_INT(0, stat(f, &st));
    CHECK_INT(0600, st.st_mode & 0777);
    size_t n = 0;
    char *raw = test_read_file(f, &n);
    CHECK(raw && n > 52 && memcmp(raw, "CDPGEXPT", 8) == 0);
    CHECK(raw && !memmem(raw, n, "sidVAL", 6) && !memmem(raw, n, "lsVAL", 5));
    /* Never clobbered without --force. */
    CHECK_INT(1, run("vault export https://bank.test -o %s --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", f));
    CHECK(has(err_, "exists"));
    size_t n2 = 0;
    char *raw2 = test_read_file(f, &n2);
    CHECK(raw && raw2 && n == n2 && memcmp(raw, raw2, n) == 0);
    free(raw2);
    /* A second machine: another data directory, another key. */
    use_data("data2");
    CHECK_INT(0, count_sessions());
    char pf[200];
    snprintf(pf, sizeof pf, "%s/pass.txt", tmpdir);
    write_text(pf, "passVAL-horse battery\n");
    CHECK_INT(0, run("vault import %s --passphrase-fd 3 3<%s", f, pf));
    CHECK(has(out_, "imported https://bank.test: 1 cookies, 1 localStorage items"));
    vault_meta m1 = {0};
    json_doc *d1 = get_session("https://bank.test", &m1);
    char *s0 = json_write(json_doc_root(d0), NULL), *s1 = json_write(json_doc_root(d1), NULL);
    CHECK(s0 && s1 && strcmp(s0, s1) == 0);
    CHECK_STR("alice@bank.test", m1.identity);
    CHECK_INT(m0.captured, m1.captured);
    CHECK_INT(exp, m1.expiry);
    free(s0), free(s1);
    json_doc_free(d1);
    vault_meta_free(&m1);
    /* Import again: refused without --force, replaced with it. */
    CHECK_INT(1, run("vault import %s --passphrase-fd 3 3<%s", f, pf));
    CHECK(has(err_, "already stored, under the identity \"alice@bank.test\""));
    /* Over a named session the refusal says what it would be replaced
     * with (issue 11, point 15b: the store keeps one session per origin). */
    CHECK_INT(1, run("vault import %s --identity default --passphrase-fd 3 3<%s", f, pf));
    CHECK(has(err_, "under the identity \"alice@bank.test\"; this import would replace it "
              "with one under \"default\" (--force replaces it)"));
    CHECK_INT(0, run("vault import --force %s --passphrase-fd=3 3<%s", f, pf));
    /* --force over an existing export file. */
    use_data("data");
    CHECK_INT(0, run("vault export https://bank.test -o %s --force --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", f));
    raw2 = test_read_file(f, &n2);
    CHECK(raw && raw2 && (n != n2 || memcmp(raw, raw2, n) != 0));   /* new salt, nonce */
    free(raw2);
    free(raw);
    json_doc_free(d0);
    vault_meta_free(&m0);
    free_out();
    env_teardown();
}

static void t_wrong_passphrase_and_tamper(void)
{
    env_setup();
    put("https://bank.test", "alice", SESSION_V1, 0);
    char f[200], g[200];
    snprintf(f, sizeof f, "%s/bank.cdpg", tmpdir);
    snprintf(g, sizeof g, "%s/bad.cdpg", tmpdir);
    CHECK_INT(0, run("vault export https://bank.test -o %s --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", f));
    use_data("data2");
    CHECK_INT(1, run("vault import %s --passphrase-fd 3 3<<'EOF'\npassVAL-wrong staple\nEOF\n",
                     f));
    CHECK(has(err_, "wrong passphrase, or the file was altered; nothing imported"));
    CHECK_INT(0, count_sessions());
    size_t n = 0;
    char *raw = test_read_file(f, &n);
    /* Every region: header, salt, nonce, ciphertext, tag. */
    size_t spots[] = {12, 20, 44, 60, n / 2, n - 1};
    for (size_t i = 0; raw && i < sizeof spots / sizeof *spots; i++) {
        raw[spots[i]] ^= 0x01;
        FILE *o = fopen(g, "w");
        if (o) {
            fwrite(raw, 1, n, o);
            fclose(o);
        }
        raw[spots[i]] ^= 0x01;
        int rc = run("vault import %s --passphrase-fd 3 3<<'EOF'\npassVAL-horse battery\nEOF\n",
                     g);
        CHECK_INT(1, rc);
        CHECK(has(err_, "nothing imported"));
    }
    /* Truncated. */
    FILE *o = fopen(g, "w");
    if (o && raw) {
        fwrite(raw, 1, n - 5, o);
        fclose(o);
    }
    CHECK_INT(1, run("vault import %s --passphrase-fd 3 3<<'EOF'\npassVAL-horse battery\nEOF\n",
                     g));
    CHECK(has(err_, "nothing imported"));
    CHECK_INT(0, count_sessions());
    /* Not an export at all, and a storageState given without --playwright. */
    write_text(g, "hello");
    CHECK_INT(1, run("vault import %s --passphrase-fd 3 3</dev/null", g));
    CHECK(has(err_, "not a cdpgate export"));
    write_text(g, "{\"cookies\":[],\"origins\":[]}");
    CHECK_INT(1, run("vault import %s --passphrase-fd 3 3</dev/null", g));
    CHECK(has(err_, "--playwright"));
    CHECK_INT(1, run("vault import %s/none --passphrase-fd 3 3</dev/null", tmpdir));
    CHECK(has(err_, "No such file"));
    /* The right passphrase still works. */
    CHECK_INT(0, run("vault import %s --passphrase-fd 3 3<<'EOF'\npassVAL-horse battery\nEOF\n",
                     f));
    CHECK_INT(1, count_sessions());
    free(raw);
    free_out();
    env_teardown();
}

static void t_export_errors(void)
{
    env_setup();
    char f[200];
    snprintf(f, sizeof f, "%s/e.cdpg", tmpdir);
    CHECK_INT(1, run("vault export https://none.test -o %s --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", f));
    CHECK(has(err_, "no stored session"));
    put("https://bank.test", "alice", SESSION_V1, 0);
    CHECK_INT(1, run("vault export https://bank.test -o %s --passphrase-fd 3 3<<'EOF'\n"
                     "short\nEOF\n", f));
    CHECK(has(err_, "shorter than 8"));
    CHECK_INT(1, run("vault export https://bank.test -o %s --passphrase-fd 3 3</dev/null", f));
    CHECK(has(err_, "empty passphrase"));
    CHECK_INT(1, run("vault export https://bank.test -o %s --passphrase-fd 9", f));
    CHECK(has(err_, "not an open file descriptor"));
    CHECK_INT(1, run("vault export https://bank.test -o %s/no/such/dir/e --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", tmpdir));
    CHECK(access(f, F_OK) != 0);
    /* A stored blob that is not session state v1 is not exported. */
    put("https://raw.test", "", "not json at all", 0);
    CHECK_INT(1, run("vault export https://raw.test -o %s --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", f));
    CHECK(has(err_, "session state format v1"));
    CHECK(access(f, F_OK) != 0);
    /* An expired session is not exported either. */
    put("https://old.test", "", SESSION_V1, (int64_t)time(NULL) - 5);
    CHECK_INT(1, run("vault export https://old.test -o %s --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", f));
    CHECK(access(f, F_OK) != 0);
    /* No temporary file is left beside the target. */
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ls -A %s | grep -c tmp", tmpdir);
    char *o = NULL;
    fixture_run(cmd, &o, NULL);
    CHECK_STR("0\n", o);
    free(o);
    free_out();
    env_teardown();
}

/* The terminal path: a pseudo-terminal as the controlling terminal. */
static void t_tty(void)
{
    env_setup();
    put("https://bank.test", "alice", SESSION_V1, 0);
    char f[200], args[400];
    snprintf(f, sizeof f, "%s/tty.cdpg", tmpdir);
    snprintf(args, sizeof args, "vault export https://bank.test -o %s", f);
    const char *two[] = {"ttyVAL-secret pass", "ttyVAL-secret pass"};
    char *tty = NULL;
    int rc = run_tty(args, two, 2, &tty);
    CHECK_INT(0, rc);
    if (rc)
        test_fail_detail("stderr: %s\nterminal: %s", err_, tty);
    CHECK(has(tty, "Passphrase for https://bank.test: "));
    CHECK(has(tty, "Repeat the passphrase: "));
    CHECK(tty && !strstr(tty, "ttyVAL"));     /* echo was off */
    CHECK(!strstr(out_, "assphrase") && !strstr(err_, "assphrase"));  /* prompts: tty */
    free(tty);
    CHECK(access(f, F_OK) == 0);
    /* Mismatch: refused, no file. */
    char g[200];
    snprintf(g, sizeof g, "%s/tty2.cdpg", tmpdir);
    snprintf(args, sizeof args, "vault export https://bank.test -o %s", g);
    const char *diff[] = {"ttyVAL-secret pass", "ttyVAL-secret pasz"};
    CHECK_INT(1, run_tty(args, diff, 2, &tty));
    CHECK(has(err_, "the two passphrases differ"));
    CHECK(access(g, F_OK) != 0);
    free(tty);
    /* Import from the terminal into another store: asked once. */
    use_data("data2");
    snprintf(args, sizeof args, "vault import %s", f);
    CHECK_INT(0, run_tty(args, two, 1, &tty));
    CHECK(has(tty, "Passphrase for "));
    CHECK(tty && !strstr(tty, "Repeat"));
    free(tty);
    CHECK_INT(1, count_sessions());
    /* The terminal settings are restored: echo is on again afterwards. */
    snprintf(args, sizeof args, "vault import --force %s; stty -a </dev/tty", f);
    CHECK_INT(0, run_tty(args, two, 1, &tty));
    CHECK(has(out_, "imported https://bank.test"));
    CHECK(has(out_, " echo "));
    CHECK(!strstr(out_, "-echo "));
    free(tty);
    /* Killed while the prompt waits with echo off: the handler puts the
     * terminal back before the signal ends the process. */
    use_data("data");
    snprintf(args, sizeof args, "vault export https://bank.test -o %s/sig.cdpg & "
             "echo $! > %s/pid; wait; stty -a </dev/tty", tmpdir, tmpdir);
    const char *term[] = {NULL};
    CHECK_INT(0, run_tty(args, term, 1, &tty));
    CHECK(has(tty, "Passphrase for https://bank.test: "));
    CHECK(has(out_, " echo "));
    CHECK(!strstr(out_, "-echo "));
    snprintf(g, sizeof g, "%s/sig.cdpg", tmpdir);
    CHECK(access(g, F_OK) != 0);
    free(tty);
    free_out();
    env_teardown();
}

/* A realistic storageState: several origins, HttpOnly/Secure cookies. */
static const char STORAGE_STATE[] =
"{\n"
"  \"cookies\": [\n"
"    {\"name\": \"SID\", \"value\": \"sidVAL-7f3a9e\", \"domain\": \".example.com\",\n"
"     \"path\": \"/\", \"expires\": -1, \"httpOnly\": true, \"secure\": true,\n"
"     \"sameSite\": \"Lax\"},\n"
"    {\"name\": \"csrf\", \"value\": \"csrfVAL-51c2d0\", \"domain\": \"app.example.com\",\n"
"     \"path\": \"/api\", \"expires\": 4102444800.25, \"httpOnly\": false,\n"
"     \"secure\": true, \"sameSite\": \"Strict\"},\n"
"    {\"name\": \"pref\", \"value\": \"prefVAL-c0ffee\", \"domain\": \".Example.com\",\n"
"     \"path\": \"/\", \"expires\": 4102444800, \"httpOnly\": false, \"secure\": false,\n"
"     \"sameSite\": \"None\"},\n"
"    {\"name\": \"api_key\", \"value\": \"apiVAL-9d8e7f\", \"domain\": \"api.service.test\",\n"
"     \"path\": \"/\", \"expires\": 4102444800, \"httpOnly\": true, \"secure\": true,\n"
"     \"sameSite\": \"None\", \"partitionKey\": \"https://example.com\",\n"
"     \"_crHasCrossSiteAncestor\": false},\n"
"    {\"name\": \"part\", \"value\": \"partVAL-4455\", \"domain\": \"api.service.test\",\n"
"     \"path\": \"/\", \"expires\": 4102444900, \"httpOnly\": true, \"secure\": true,\n"
"     \"sameSite\": \"None\"},\n"
"    {\"name\": \"gone\", \"value\": \"oldVAL-1e2d3c\", \"domain\": \"old.test\",\n"
"     \"path\": \"/\", \"expires\": 1000000, \"httpOnly\": true, \"secure\": true,\n"
"     \"sameSite\": \"Lax\"}\n"
"  ],\n"
"  \"origins\": [\n"
"    {\"origin\": \"https://app.example.com\", \"localStorage\": [\n"
"      {\"name\": \"token\", \"value\": \"lsVAL-tokenAB12\"},\n"
"      {\"name\": \"theme\", \"value\": \"lsVAL-themeCD34\"}]},\n"
"    {\"origin\": \"http://legacy.example.com\", \"localStorage\": []},\n"
"    {\"origin\": \"https://spa.test:8443\", \"localStorage\": [\n"
"      {\"name\": \"state\", \"value\": \"lsVAL-deepEF56\"}]}\n"
"  ]\n"
"}\n";

static void t_playwright(void)
{
    env_setup();
    char f[200];
    snprintf(f, sizeof f, "%s/state.json", tmpdir);
    write_text(f, STORAGE_STATE);
    CHECK_INT(0, run("vault import --playwright %s", f));
    CHECK(has(out_, "imported https://app.example.com: 3 cookies, 2 localStorage items"));
    CHECK(has(out_, "imported http://legacy.example.com: 1 cookies, 0 localStorage items"));
    CHECK(has(out_, "imported https://spa.test:8443: 0 cookies, 1 localStorage items"));
    CHECK(has(out_, "imported https://api.service.test: 2 cookies, 0 localStorage items"));
    CHECK(has(out_, "skipped 1 expired cookies"));
    CHECK(!strstr(out_, "old.test"));
    CHECK_INT(0, run("vault list"));
    /* Stored under the identity "default" (a grant names it to restore). */
    CHECK(has(out_, "https://app.example.com  identity default"));
    CHECK(has(out_, "http://legacy.example.com"));
    CHECK(has(out_, "https://spa.test:8443"));
    CHECK(has(out_, "https://api.service.test"));
    CHECK_INT(4, count_sessions());

    /* app.example.com: the Secure domain cookie, its host-only cookie, the
     * non-secure domain cookie; its own localStorage. */
    json_doc *d = get_session("https://app.example.com", NULL);
    const json_val *r = json_doc_root(d);
    CHECK_INT(1, json_get_int(r, "version", 0));
    CHECK_INT(3, json_len(json_get(r, "cookies")));
    const json_val *c = cookie(d, "SID");
    CHECK_STR("sidVAL-7f3a9e", json_get_str(c, "value"));
    CHECK_STR(".example.com", json_get_str(c, "domain"));
    CHECK_STR("/", json_get_str(c, "path"));
    CHECK(json_type_of(json_get(c, "httpOnly")) == JSON_TRUE);
    CHECK(json_type_of(json_get(c, "secure")) == JSON_TRUE);
    CHECK_STR("Lax", json_get_str(c, "sameSite"));
    CHECK(json_get(c, "expires") == NULL);           /* a session cookie */
    c = cookie(d, "csrf");
    CHECK_STR("app.example.com", json_get_str(c, "domain"));
    CHECK_STR("/api", json_get_str(c, "path"));
    CHECK_STR("Strict", json_get_str(c, "sameSite"));
    CHECK(json_num(json_get(c, "expires")) == 4102444800.25);
    CHECK(json_type_of(json_get(c, "httpOnly")) == JSON_FALSE);
    c = cookie(d, "pref");
    CHECK_STR(".example.com", json_get_str(c, "domain"));      /* lower-cased */
    const json_val *ls = json_get(json_get(r, "localStorage"), "https://app.example.com");
    CHECK_INT(1, json_len(json_get(r, "localStorage")));
    CHECK_INT(2, json_len(ls));
    CHECK_STR("token", json_str(json_at(json_at(ls, 0), 0), NULL));
    CHECK_STR("lsVAL-tokenAB12", json_str(json_at(json_at(ls, 0), 1), NULL));
    json_doc_free(d);

    /* http://legacy.example.com: only the non-secure cookie. */
    d = get_session("http://legacy.example.com", NULL);
    CHECK_INT(1, json_len(json_get(json_doc_root(d), "cookies")));
    CHECK(cookie(d, "pref") != NULL);
    CHECK(cookie(d, "SID") == NULL);
    CHECK_INT(0, json_len(json_get(json_doc_root(d), "localStorage")));
    json_doc_free(d);

    /* api.service.test: no origin entry, so a session of its own; the
     * partition key in CDP's shape. Every cookie persistent and no
     * localStorage: the session expires with its last cookie. */
    vault_meta m = {0};
    d = get_session("https://api.service.test", &m);
    c = cookie(d, "api_key");
    CHECK_STR("https://example.com", json_get_str(json_get(c, "partitionKey"),
                                                  "topLevelSite"));
    CHECK(json_type_of(json_path(c, "partitionKey.hasCrossSiteAncestor")) == JSON_FALSE);
    CHECK(json_get(c, "_crHasCrossSiteAncestor") == NULL);
    CHECK(json_get(cookie(d, "part"), "partitionKey") == NULL);
    CHECK_INT(4102444901, m.expiry);
    vault_meta_free(&m);
    json_doc_free(d);
    d = get_session("https://spa.test:8443", &m);
    CHECK_INT(0, m.expiry);
    CHECK_INT(0, json_len(json_get(json_doc_root(d), "cookies")));
    vault_meta_free(&m);
    json_doc_free(d);

    /* Imported sessions export like any other. */
    char e[200];
    snprintf(e, sizeof e, "%s/app.cdpg", tmpdir);
    CHECK_INT(0, run("vault export https://app.example.com -o %s --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", e));
    /* Again: refused as a whole without --force (nothing written). */
    CHECK_INT(0, run("vault rm https://spa.test:8443"));
    CHECK_INT(1, run("vault import --playwright %s", f));
    CHECK(has(err_, "already stored"));
    CHECK_INT(3, count_sessions());
    CHECK_INT(0, run("vault import --playwright %s --force", f));
    CHECK_INT(4, count_sessions());
    /* Under a named identity, the one a task grant will name. */
    CHECK_INT(0, run("vault import --playwright %s --force --identity alice", f));
    CHECK_INT(0, run("vault list"));
    CHECK(has(out_, "https://app.example.com  identity alice"));
    CHECK_INT(2, run("vault list --identity alice"));
    /* Without --identity over alice's sessions: refused, naming both. */
    CHECK_INT(1, run("vault import --playwright %s", f));
    CHECK(has(err_, "under the identity \"alice\"; this import would replace it with one "
              "under \"default\""));
    CHECK_INT(0, run("vault list"));
    CHECK(has(out_, "https://app.example.com  identity alice"));
    free_out();
    env_teardown();
}

static void t_playwright_refused(void)
{
    env_setup();
    char f[200];
    snprintf(f, sizeof f, "%s/bad.json", tmpdir);
    struct {
        const char *text, *why;
    } bad[] = {
        {"{\"cookies\": [ {\"name\": \"a\", \"value\": \"dupVAL-aa11\"", "not a valid"},
        {"{\"cookies\":[{\"name\":\"a\",\"value\":\"dupVAL-aa11\",\"value\":\"dupVAL-bb22\","
         "\"domain\":\"a.test\",\"path\":\"/\"}],\"origins\":[]}", "duplicate"},
        {"{\"cookies\":[],\"cookies\":[],\"origins\":[]}", "duplicate"},
        {"[1,2,3]", "not a storageState"},
        {"{\"cookies\":{},\"origins\":[]}", "not a storageState"},
        {"{\"cookies\":[{\"name\":\"a\",\"value\":\"dupVAL-aa11\",\"domain\":\"a.test\"}],"
         "\"origins\":[]}", "cookies[0]: bad path"},
        {"{\"cookies\":[{\"value\":\"dupVAL-aa11\",\"domain\":\"a.test\",\"path\":\"/\"}]}",
         "cookies[0]: name or value"},
        {"{\"cookies\":[{\"name\":\"a\",\"value\":\"dupVAL-aa11\\u0001\",\"domain\":\"a.test\","
         "\"path\":\"/\"}]}", "control character"},
        {"{\"cookies\":[{\"name\":\"a\",\"value\":\"dupVAL-aa11\",\"domain\":\"a.test\","
         "\"path\":\"/\",\"sameSite\":\"Sometimes\"}]}", "sameSite"},
        {"{\"cookies\":[{\"name\":\"a\",\"value\":\"dupVAL-aa11\",\"domain\":\"a.test\","
         "\"path\":\"/\",\"secure\":\"yes\"}]}", "booleans"},
        {"{\"cookies\":[{\"name\":\"a\",\"value\":\"dupVAL-aa11\",\"domain\":\"a b.test\","
         "\"path\":\"/\"}]}", "not a host name"},
        {"{\"cookies\":[{\"name\":\"a\",\"value\":\"dupVAL-aa11\",\"domain\":\"a.test\","
         "\"path\":\"/\",\"expires\":\"soon\"}]}", "expires"},
        {"{\"cookies\":[],\"origins\":[{\"origin\":\"https://a.test\",\"localStorage\":[]},"
         "{\"origin\":\"https://A.test:443\",\"localStorage\":[]}]}", "appears twice"},
        {"{\"cookies\":[],\"origins\":[{\"origin\":\"https://u:userinfoVAL-pw@a.test\"}]}",
         "user name or password"},
        {"{\"cookies\":[],\"origins\":[{\"origin\":\"file:///etc\"}]}", "origins[0]"},
        {"{\"cookies\":[],\"origins\":[{\"origin\":\"https://a.test\",\"localStorage\":"
         "[{\"name\":\"k\",\"value\":7}]}]}", "localStorage[0]"},
        {"{\"cookies\":[],\"origins\":[{\"origin\":\"https://a.test\",\"localStorage\":"
         "[{\"name\":\"k\",\"value\":\"dupVAL-aa11\",\"x\":[[[[1]]]]}]}]}", "too deep"},
        {"{\"cookies\":[{\"name\":\"gone\",\"value\":\"dupVAL-aa11\",\"domain\":\"a.test\","
         "\"path\":\"/\",\"expires\":5}],\"origins\":[]}", "nothing to import"},
        {"", "not a valid"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        write_text(f, bad[i].text);
        int rc = run("vault import --playwright %s", f);
        if (!CHECK_INT(1, rc) || !has(err_, bad[i].why))
            test_fail_detail("case %zu", i);
    }
    /* A 4-kB cookie limit (name + value). */
    size_t big = 5000;
    char *t = malloc(big + 200);
    if (t) {
        int n = snprintf(t, 200, "{\"cookies\":[{\"name\":\"a\",\"domain\":\"a.test\","
                         "\"path\":\"/\",\"value\":\"");
        memset(t + n, 'v', big);
        snprintf(t + n + big, 100, "\"}],\"origins\":[]}");
        write_text(f, t);
        free(t);
        CHECK_INT(1, run("vault import --playwright %s", f));
        CHECK(has(err_, "over 4096 bytes"));
    }
    /* Oversized: refused from its size, before reading. */
    int fd = open(f, O_WRONLY | O_TRUNC);
    if (fd >= 0) {
        CHECK_INT(0, ftruncate(fd, (33 << 20)));
        close(fd);
    }
    CHECK_INT(1, run("vault import --playwright %s", f));
    CHECK(has(err_, "larger than"));
    CHECK_INT(1, run("vault import --playwright %s", tmpdir));
    CHECK(has(err_, "not a regular file"));
    CHECK_INT(0, count_sessions());
    free_out();
    env_teardown();
}

static void t_key_cmd(void)
{
    env_setup();
    setenv("CDPGATE_KEY_CMD",
           "echo 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", 1);
    char f[200], e[200];
    snprintf(f, sizeof f, "%s/state.json", tmpdir);
    snprintf(e, sizeof e, "%s/x.cdpg", tmpdir);
    write_text(f, STORAGE_STATE);
    CHECK_INT(0, run("vault import --playwright %s", f));
    CHECK_INT(0, run("vault export https://app.example.com -o %s --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", e));
    /* A failing key command: a clear error, nothing exported or imported. */
    setenv("CDPGATE_KEY_CMD", "exit 3", 1);
    CHECK_INT(1, run("vault import --force %s --passphrase-fd 3 "
                     "3<<'EOF'\npassVAL-horse battery\nEOF\n", e));
    CHECK(has(err_, "cdpgate vault import: "));
    unsetenv("CDPGATE_KEY_CMD");
    char key[200];
    snprintf(key, sizeof key, "%s/cdpgate/key", datadir);
    CHECK(access(key, F_OK) != 0);     /* the default key file was never created */
    CHECK(transcript && !strstr(transcript, "aabbccddeeff0011"));
    free_out();
    env_teardown();
}

static const test_case TESTS[] = {
    {"usage", t_usage},
    {"no_passphrase_argument", t_no_passphrase_argument},
    {"list", t_list},
    {"list_no_key", t_list_no_key},
    {"rm", t_rm},
    {"roundtrip", t_roundtrip},
    {"wrong_passphrase_and_tamper", t_wrong_passphrase_and_tamper},
    {"export_errors", t_export_errors},
    {"tty", t_tty},
    {"playwright", t_playwright},
    {"playwright_refused", t_playwright_refused},
    {"key_cmd", t_key_cmd},
    {0, 0},
};

int main(int argc, char **argv)
{
    int rc = test_main(argc, argv, TESTS);
    free_out();
    return rc;
}
