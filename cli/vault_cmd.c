/*
 * vault_cmd.c — `cdpgate vault list|rm|export|import`: the session store
 * from the command line (docs/vault.md "Commands", docs/cli.md).
 *
 *   list      metadata only (the .json files), never decrypts, never asks
 *             for the key;
 *   rm        both files of one origin, under the store lock;
 *   export    one session sealed with a passphrase (PBKDF2-HMAC-SHA256,
 *             AES-256-GCM: vault_seal_passphrase) into a 0600 file written
 *             atomically;
 *   import    an export back into the store, or a Playwright storageState
 *             file (--playwright) split into one session per origin.
 *
 * Secrets. Cookie and localStorage values, passphrases and the vault key
 * never reach stdout, stderr or argv: the passphrase comes from the
 * controlling terminal (echo off) or from --passphrase-fd N, never from an
 * argument or the environment; error messages name fields and indexes,
 * never contents; an unknown option is echoed without its "=value".
 * Buffers that held plaintext and that this file owns are wiped before
 * they are freed; so are the documents parsed from it (JSON_SECRET) and
 * the JSON written from it (secret writers, json_w_init_secret).
 *
 * The session blob stored for an origin is "session state format v1"
 * (docs/vault.md): cli_session_check() (cli/vault_state.c, with the
 * origins) is its reader's validation, and
 * the Playwright import its first writer.
 */
#include "cli/cli.h"
#include "cli/vault_int.h"
#include "base/base.h"
#include "json/json.h"
#include "vault/vault.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static const char VAULT_USAGE[] =
"usage: cdpgate vault list [--json]\n"
"       cdpgate vault rm ORIGIN\n"
"       cdpgate vault export ORIGIN -o FILE [--passphrase-fd N] [--force]\n"
"       cdpgate vault import FILE [--passphrase-fd N] [--force] [--identity NAME]\n"
"       cdpgate vault import --playwright STORAGE_STATE.json [--force]\n"
"                            [--identity NAME]\n"
"\n"
"The encrypted session store ($XDG_DATA_HOME/cdpgate, else\n"
"~/.local/share/cdpgate; the key from $CDPGATE_KEY_CMD, else the key file).\n"
"\n"
"  list                one line per stored session: origin, identity, when it\n"
"                      was captured and last used, its expiry, \"expired\" when\n"
"                      past; read from metadata only, nothing is decrypted\n"
"                      (--json: one JSON object on stdout)\n"
"  rm ORIGIN           remove the session of ORIGIN\n"
"  export ORIGIN -o FILE\n"
"                      seal the session of ORIGIN with a passphrase into FILE\n"
"                      (mode 0600; an existing FILE needs --force)\n"
"  import FILE         store the session sealed in FILE (a replaced session\n"
"                      needs --force)\n"
"  import --playwright FILE\n"
"                      store the cookies and localStorage of a Playwright\n"
"                      storageState file, one session per origin\n"
"  --identity NAME     import: the identity the session is stored under (a\n"
"                      task grant names it to have the session restored);\n"
"                      default: the exported one, else \"default\"\n"
"\n"
"ORIGIN is scheme://host[:port] (a URL works: its path is ignored).\n"
"The passphrase is read from the terminal with echo off (twice for export),\n"
"or with --passphrase-fd N from file descriptor N up to a newline or EOF.\n"
"It is never taken from an argument or an environment variable.\n"
"\n"
"exit codes: 0 ok, 1 failed (no such session, wrong passphrase or tampered\n"
"file, bad input file, vault error: the message says which), 2 bad command\n"
"line.\n";

/* ------------------------------------------------------------------ */
/* messages */

static int failf(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cdpgate vault %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_FAIL;
}

int cli_seterr(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Print s with every byte outside printable ASCII as \xNN, so that a
 * crafted metadata file cannot drive the terminal. */
static void put_safe(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c >= 0x7f || c == '\\')
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
}

/* ------------------------------------------------------------------ */
/* files */

static void wipe_free(void *p, size_t n)
{
    if (p) {
        base_memzero(p, n);
        free(p);
    }
}

/* Read a whole regular file of at most max bytes into a new NUL-terminated
 * buffer (free with wipe_free(buf, len + 1)). */
static int read_file(const char *path, size_t max, char **buf, size_t *len, char *err,
                     size_t errlen)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cli_seterr(err, errlen, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cli_seterr(err, errlen, "%s: not a regular file", path);
    }
    if ((unsigned long long)st.st_size > max) {
        close(fd);
        return cli_seterr(err, errlen, "%s: larger than %zu bytes", path, max);
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *b = malloc(cap);
    if (!b) {
        close(fd);
        return cli_seterr(err, errlen, "out of memory");
    }
    for (;;) {
        ssize_t r = read(fd, b + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            wipe_free(b, cap);
            return cli_seterr(err, errlen, "%s: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == cap - 1) {
            char extra;
            if (read(fd, &extra, 1) > 0) {     /* grew while we read */
                close(fd);
                wipe_free(b, cap);
                return cli_seterr(err, errlen, "%s: changed while being read", path);
            }
            break;
        }
    }
    close(fd);
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}

/*
 * Write data to path atomically with mode 0600 (base_file_put): a temporary
 * file beside it, then link(2) to path (which fails when path exists:
 * nothing is clobbered) or, with force, rename(2) over it; then fsync of
 * the directory (best effort: the file is in place). On any other failure
 * path is untouched.
 */
static int write_file_atomic(const char *path, const void *data, size_t len, bool force,
                             char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    if (!*path || (slash && slash[1] == 0))
        return cli_seterr(err, errlen, "%s: not a file name", path);
    if (strlen(path) > 4000)
        return cli_seterr(err, errlen, "output path too long");
    int step;
    if (base_file_put(AT_FDCWD, path, data, len, force ? BASE_PUT_REPLACE : BASE_PUT_NEW,
                      &step) == 0 || step == BASE_PUT_ESYNC)
        return 0;
    switch (step) {
    case BASE_PUT_ERANDOM:
        return cli_seterr(err, errlen, "no random bytes");
    case BASE_PUT_ECREATE:
        return cli_seterr(err, errlen, "%s: cannot create a file there: %s", path, strerror(errno));
    case BASE_PUT_EWRITE:
        return cli_seterr(err, errlen, "%s: write failed: %s", path, strerror(errno));
    default:
        return errno == EEXIST && !force
            ? cli_seterr(err, errlen, "%s exists (--force replaces it)", path)
            : cli_seterr(err, errlen, "%s: %s", path, strerror(errno));
    }
}

/* ------------------------------------------------------------------ */
/* passphrases */

/* The terminal state to put back if a signal arrives while echo is off. */
static volatile sig_atomic_t tty_restore_fd = -1;
static struct termios tty_saved;

static void tty_on_signal(int sig)
{
    if (tty_restore_fd >= 0)
        tcsetattr(tty_restore_fd, TCSAFLUSH, &tty_saved);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Read one line (up to '\n' or EOF) of at most PASS_MAX bytes from fd into
 * buf (cap > PASS_MAX); strips "\n" or "\r\n". Returns the length, -1 on a
 * read error, -2 when longer than PASS_MAX (the rest of the line is read
 * and dropped). */
static long read_line(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    bool over = false;
    for (;;) {
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0 || c == '\n')
            break;
        if (n < PASS_MAX && n < cap - 1)
            buf[n++] = c;
        else
            over = true;
    }
    if (n && buf[n - 1] == '\r')
        n--;
    buf[n] = 0;
    if (over) {
        base_memzero(buf, cap);
        return -2;
    }
    return (long)n;
}

/* Prompt on the terminal with echo off (ECHONL keeps the newline visible)
 * and read one line. The terminal state is restored afterwards, and by a
 * handler if SIGINT, SIGTERM, SIGHUP or SIGQUIT arrives meanwhile. */
static long tty_read(int tty, const char *prompt, char *buf, size_t cap)
{
    struct termios t;
    if (tcgetattr(tty, &tty_saved) != 0)
        return -1;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa, old[4];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tty_on_signal;
    sigemptyset(&sa.sa_mask);
    tty_restore_fd = tty;
    for (int i = 0; i < 4; i++)
        sigaction(sigs[i], &sa, &old[i]);
    t = tty_saved;
    t.c_lflag &= ~(tcflag_t)(ECHO | ECHOE | ECHOK);
    t.c_lflag |= ECHONL | ICANON;
    long n = -1;
    if (tcsetattr(tty, TCSAFLUSH, &t) == 0) {
        if (base_write_all(tty, prompt, strlen(prompt), BASE_NO_DEADLINE, 0, NULL) == 0)
            n = read_line(tty, buf, cap);
        tcsetattr(tty, TCSAFLUSH, &tty_saved);
    }
    tty_restore_fd = -1;
    for (int i = 0; i < 4; i++)
        sigaction(sigs[i], &old[i], NULL);
    return n;
}

/*
 * Get a passphrase into buf (cap > PASS_MAX): from file descriptor pfd when
 * pfd >= 0, else from the controlling terminal (/dev/tty), asking twice
 * when confirm. Returns the length (>= 1), or -1 after printing why.
 */
static long get_passphrase(const char *cmd, int pfd, bool confirm, const char *what, char *buf,
                           size_t cap)
{
    long n;
    if (pfd >= 0) {
        if (fcntl(pfd, F_GETFD) < 0) {
            failf(cmd, "--passphrase-fd %d: not an open file descriptor", pfd);
            return -1;
        }
        n = read_line(pfd, buf, cap);
        if (n == -1)
            failf(cmd, "--passphrase-fd %d: %s", pfd, strerror(errno));
    } else {
        int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (tty < 0) {
            failf(cmd, "no terminal to ask for the passphrase (give it on a file "
                  "descriptor with --passphrase-fd N)");
            return -1;
        }
        char prompt[ORIGIN_CAP + 64];
        snprintf(prompt, sizeof prompt, "Passphrase for %s: ", what);
        n = tty_read(tty, prompt, buf, cap);
        if (n == -1)
            failf(cmd, "cannot read the passphrase from the terminal: %s", strerror(errno));
        if (n > 0 && confirm) {
            char again[PASS_MAX + 2];
            long m = tty_read(tty, "Repeat the passphrase: ", again, sizeof again);
            if (m != n || !vault_ct_equal(buf, again, (size_t)n)) {
                if (m >= 0)
                    failf(cmd, "the two passphrases differ");
                else
                    failf(cmd, "cannot read the passphrase from the terminal");
                n = -1;
            }
            base_memzero(again, sizeof again);
        }
        close(tty);
    }
    if (n == -2)
        failf(cmd, "passphrase longer than %u bytes", PASS_MAX);
    else if (n == 0)
        failf(cmd, "empty passphrase");
    else if (n > 0 && confirm && (size_t)n < PASS_MIN_EXPORT)
        failf(cmd, "passphrase shorter than %u characters", PASS_MIN_EXPORT), n = -3;
    if (n <= 0)
        base_memzero(buf, cap);
    return n > 0 ? n : -1;
}

/* ------------------------------------------------------------------ */
/* the store */

/* list and rm read no secret: they open the store with a provider that
 * gives a zero key, so no key file is created and no key command runs. */
static int no_key(void *arg, const char *dir, uint8_t key[32], char *err, size_t errlen)
{
    (void)arg, (void)dir, (void)err, (void)errlen;
    memset(key, 0, 32);
    return VAULT_OK;
}

static vault *store_open(const char *cmd, bool need_key)
{
    char err[512];
    vault_keyprov nk = {no_key, NULL};
    vault *v = vault_open(NULL, need_key ? NULL : &nk, err, sizeof err);
    if (!v)
        failf(cmd, "%s", err);
    return v;
}

/* Is a session stored for origin (its .enc present)? */
static bool store_has(vault *v, const char *origin)
{
    char name[65], path[4200];
    vault_origin_name(origin, name);
    snprintf(path, sizeof path, "%s/sessions/%s.enc", vault_dir(v), name);
    struct stat st;
    return lstat(path, &st) == 0;
}

/* s as put_safe writes it, into out (cut to fit). */
static void safe_copy(char *out, size_t cap, const char *s)
{
    size_t o = 0;
    for (; *s && o + 5 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c >= 0x7f || c == '\\')
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
        else
            out[o++] = (char)c;
    }
    out[o] = 0;
}

/* Without --force an import never replaces a stored session. The refusal
 * names the identity the stored one is under and the one the import
 * would use: the store keeps one session per origin whatever its identity
 * (issue 11, point 15b). EXIT_FAIL with the message, or 0 when origin has
 * no session. */
static int import_refuse(vault *v, const char *origin, const char *ident)
{
    if (!store_has(v, origin))
        return 0;
    char was[300] = "", now[300];
    vault_meta *m = NULL;
    size_t n = 0;
    if (vault_list(v, &m, &n, NULL, 0) == 0)
        for (size_t i = 0; i < n; i++)
            if (strcmp(m[i].origin, origin) == 0)
                safe_copy(was, sizeof was, m[i].identity);
    vault_list_free(m, n);
    safe_copy(now, sizeof now, ident);
    return failf("import", "a session for %s is already stored, under the identity \"%s\"; "
                 "this import would replace it with one under \"%s\" (--force replaces it); "
                 "nothing imported", origin, was, now);
}

static void fmt_time(int64_t t, char *out, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (t <= 0 || !gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, cap, "%s", t <= 0 ? "never" : "?");
}

/* ------------------------------------------------------------------ */
/* vault list */

static int cmd_list(bool as_json)
{
    vault *v = store_open("list", false);
    if (!v)
        return EXIT_FAIL;
    vault_meta *m = NULL;
    size_t n = 0;
    char err[512];
    int rc = vault_list(v, &m, &n, err, sizeof err);
    vault_close(v);
    if (rc)
        return failf("list", "%s", err);
    int64_t now = (int64_t)time(NULL);
    if (as_json) {
        json_w w;
        json_w_init(&w);
        json_w_obj_begin(&w);
        json_w_key(&w, "version");
        json_w_int(&w, 1);
        json_w_key(&w, "sessions");
        json_w_arr_begin(&w);
        for (size_t i = 0; i < n; i++) {
            json_w_obj_begin(&w);
            json_w_key(&w, "origin");
            json_w_str(&w, m[i].origin);
            json_w_key(&w, "identity");
            json_w_str(&w, m[i].identity);
            json_w_key(&w, "captured");
            json_w_int(&w, m[i].captured);
            json_w_key(&w, "last_used");
            json_w_int(&w, m[i].last_used);
            json_w_key(&w, "expiry");
            if (m[i].expiry > 0)
                json_w_int(&w, m[i].expiry);
            else
                json_w_null(&w);
            json_w_key(&w, "expired");
            json_w_bool(&w, m[i].expiry > 0 && m[i].expiry <= now);
            json_w_obj_end(&w);
        }
        json_w_arr_end(&w);
        json_w_obj_end(&w);
        char *s = json_w_take(&w, NULL);
        if (s)
            printf("%s\n", s);
        else
            rc = failf("list", "cannot write the listing");
        free(s);
    } else {
        if (n == 0)
            fprintf(stderr, "cdpgate vault list: no stored sessions\n");
        for (size_t i = 0; i < n; i++) {
            char cap[32], used[32], exp[32];
            fmt_time(m[i].captured, cap, sizeof cap);
            fmt_time(m[i].last_used, used, sizeof used);
            fmt_time(m[i].expiry, exp, sizeof exp);
            put_safe(stdout, m[i].origin);
            fputs("  identity ", stdout);
            if (*m[i].identity)
                put_safe(stdout, m[i].identity);
            else
                fputs("-", stdout);
            printf("  captured %s  last used %s  expires %s%s\n", cap, used,
                   m[i].expiry > 0 ? exp : "never",
                   m[i].expiry > 0 && m[i].expiry <= now ? "  expired" : "");
        }
    }
    vault_list_free(m, n);
    return rc ? EXIT_FAIL : EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* vault rm */

static int cmd_rm(const char *arg)
{
    char origin[ORIGIN_CAP], why[128];
    /* An argument that is no origin is looked up as written, so that an
     * oddly named session that `list` shows can still be removed. */
    if (cli_origin_parse(arg, origin, sizeof origin, NULL, NULL, 0, why, sizeof why)) {
        if (strchr(arg, '@'))
            return failf("rm", "%s", why);
        snprintf(origin, sizeof origin, "%s", arg);
    }
    vault *v = store_open("rm", false);
    if (!v)
        return EXIT_FAIL;
    char err[512];
    int rc = vault_rm(v, origin, err, sizeof err);
    vault_close(v);
    if (rc)
        return failf("rm", "%s", err);
    printf("removed %s\n", origin);
    return EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* vault export */

static int cmd_export(const char *arg, const char *out, int pfd, bool force)
{
    char origin[ORIGIN_CAP], err[512];
    if (cli_origin_parse(arg, origin, sizeof origin, NULL, NULL, 0, err, sizeof err)) {
        fprintf(stderr, "cdpgate vault export: bad origin: %s\n", err);
        return EXIT_USAGE;
    }
    if (!force && access(out, F_OK) == 0)
        return failf("export", "%s exists (--force replaces it)", out);
    vault *v = store_open("export", true);
    if (!v)
        return EXIT_FAIL;
    uint8_t *blob = NULL;
    size_t blen = 0;
    vault_meta meta = {0};
    int rc = vault_get(v, origin, &blob, &blen, &meta, err, sizeof err);
    vault_close(v);
    if (rc)
        return failf("export", "%s", err);
    char cerr[256];
    if (cli_session_check((const char *)blob, blen, cerr, sizeof cerr)) {
        vault_free_blob(blob, blen);
        vault_meta_free(&meta);
        return failf("export", "the stored session of %s is not in session state "
                     "format v1: %s", origin, cerr);
    }
    json_w w;
    json_w_init_secret(&w);
    w.max = VAULT_EXPORT_MAX;
    json_w_obj_begin(&w);
    json_w_key(&w, "format");
    json_w_str(&w, EXPORT_FORMAT);
    json_w_key(&w, "version");
    json_w_int(&w, 1);
    json_w_key(&w, "origin");
    json_w_str(&w, origin);
    json_w_key(&w, "identity");
    json_w_str(&w, meta.identity ? meta.identity : "");
    json_w_key(&w, "captured");
    json_w_int(&w, meta.captured);
    json_w_key(&w, "expiry");
    json_w_int(&w, meta.expiry);
    json_w_key(&w, "session");
    json_w_raw(&w, (const char *)blob, blen, false);
    json_w_obj_end(&w);
    vault_free_blob(blob, blen);
    vault_meta_free(&meta);
    size_t plen = 0;
    int werr = json_w_error(&w);
    if (werr) {
        json_w_free(&w);        /* a secret writer: zeroed */
        return failf("export", "cannot build the export: %s", json_strerror(werr));
    }
    char *payload = json_w_take(&w, &plen);

    char pass[PASS_MAX + 2];
    long pl = get_passphrase("export", pfd, true, origin, pass, sizeof pass);
    if (pl < 0) {
        wipe_free(payload, plen);
        return EXIT_FAIL;
    }
    uint8_t *sealed = NULL;
    size_t slen = 0;
    rc = vault_seal_passphrase(pass, (size_t)pl, (const uint8_t *)payload, plen, 0, &sealed,
                               &slen, err, sizeof err);
    base_memzero(pass, sizeof pass);
    wipe_free(payload, plen);
    if (rc)
        return failf("export", "%s", err);
    rc = write_file_atomic(out, sealed, slen, force, err, sizeof err);
    free(sealed);
    if (rc)
        return failf("export", "%s", err);
    printf("exported %s to %s\n", origin, out);
    return EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* vault import FILE */

static int cmd_import_export(const char *file, int pfd, bool force, const char *identity)
{
    char *buf = NULL, err[512];
    size_t len = 0;
    if (read_file(file, EXPORT_FILE_MAX, &buf, &len, err, sizeof err))
        return failf("import", "%s", err);
    if (len < 8 || memcmp(buf, "CDPGEXPT", 8) != 0) {
        bool js = len && (buf[0] == '{' || buf[0] == ' ' || buf[0] == '\n');
        wipe_free(buf, len + 1);
        return failf("import", "%s is not a cdpgate export%s", file,
                     js ? " (a Playwright storageState file? use --playwright)" : "");
    }
    char pass[PASS_MAX + 2];
    long pl = get_passphrase("import", pfd, false, file, pass, sizeof pass);
    if (pl < 0) {
        wipe_free(buf, len + 1);
        return EXIT_FAIL;
    }
    uint8_t *pt = NULL;
    size_t ptlen = 0;
    int rc = vault_open_passphrase(pass, (size_t)pl, (const uint8_t *)buf, len, &pt, &ptlen,
                                   err, sizeof err);
    base_memzero(pass, sizeof pass);
    wipe_free(buf, len + 1);
    if (rc == VAULT_EAUTH)
        return failf("import", "%s: wrong passphrase, or the file was altered; nothing "
                     "imported", file);
    if (rc)
        return failf("import", "%s: %s; nothing imported", file, err);

    json_err je = {0};
    json_doc *d = cli_parse_strict((const char *)pt, ptlen, VAULT_EXPORT_MAX, 10, &je);
    const json_val *r = json_doc_root(d), *sess = json_get(r, "session");
    const char *origin = json_get_str(r, "origin"), *ident = json_get_str(r, "identity");
    int64_t ver = 0, captured = -1, expiry = -1;
    char canon[ORIGIN_CAP];
    size_t nc = 0, ni = 0;
    rc = EXIT_FAIL;
    if (!d) {
        failf("import", "%s: the sealed content is not valid JSON (%s)", file,
              je.msg ? je.msg : json_strerror(je.code));
    } else if (!json_get_str(r, "format") || strcmp(json_get_str(r, "format"), EXPORT_FORMAT) ||
               !json_int(json_get(r, "version"), &ver) || ver != 1) {
        failf("import", "%s: not a version 1 session export", file);
    } else if (!origin || cli_origin_parse(origin, canon, sizeof canon, NULL, NULL, 0, NULL, 0) ||
               strcmp(canon, origin) != 0 || !ident ||
               !json_int(json_get(r, "captured"), &captured) || captured < 0 ||
               !json_int(json_get(r, "expiry"), &expiry) || expiry < 0) {
        failf("import", "%s: bad origin, identity, captured or expiry field", file);
    } else if (cli_session_check_val(sess, &nc, &ni, err, sizeof err)) {
        failf("import", "%s: %s", file, err);
    } else if (expiry > 0 && expiry <= (int64_t)time(NULL)) {
        char t[32];
        fmt_time(expiry, t, sizeof t);
        failf("import", "%s: the session of %s expired at %s; log in again", file, origin, t);
    } else {
        rc = EXIT_OK;
    }
    char *blob = NULL;
    size_t blen = 0;
    if (rc == EXIT_OK) {
        json_w w;
        json_w_init_secret(&w);
        json_w_val(&w, sess);
        int werr = json_w_error(&w);
        blob = json_w_take(&w, &blen);
        json_w_free(&w);
        if (!blob)
            rc = failf("import", "cannot rebuild the session: %s", json_strerror(werr));
    }
    vault *v = NULL;
    if (rc == EXIT_OK && !(v = store_open("import", true)))
        rc = EXIT_FAIL;
    if (identity)
        ident = identity;
    else if (!ident || !*ident)
        ident = "default";
    if (rc == EXIT_OK && !force && import_refuse(v, origin, ident))
        rc = EXIT_FAIL;
    if (rc == EXIT_OK && vault_put_at(v, origin, ident, (const uint8_t *)blob, blen, captured,
                                      expiry, err, sizeof err))
        rc = failf("import", "%s", err);
    if (rc == EXIT_OK)
        printf("imported %s: %zu cookies, %zu localStorage items\n", origin, nc, ni);
    vault_close(v);
    wipe_free(blob, blen);
    json_doc_free(d);
    wipe_free(pt, ptlen);
    return rc;
}

/* ------------------------------------------------------------------ */
/* vault import --playwright FILE */

typedef struct {
    const json_val *v;       /* the cookie object (borrowed from the document) */
    char domain[HOST_MAX + 2];   /* lower-cased; a leading '.' = domain cookie */
    const char *host;        /* domain without the leading '.' */
    bool secure, dropped;    /* dropped: expired */
    double expires;          /* -1 = session cookie */
} pw_cookie;

typedef struct {
    char origin[ORIGIN_CAP];
    char host[HOST_MAX + 3];
    bool https;
    const json_val *ls;      /* localStorage array, or NULL */
} pw_origin;

/* Does the browser send cookie c to origin o? RFC 6265 §5.4: the host
 * domain-matches (equal, or a subdomain of a domain cookie's domain), a
 * Secure cookie goes to https only; paths and ports do not separate
 * origins (a session holds every path's cookies). */
static bool cookie_for(const pw_cookie *c, const pw_origin *o)
{
    if (c->dropped || (c->secure && !o->https))
        return false;
    if (strcmp(o->host, c->host) == 0)
        return true;
    if (c->domain[0] != '.')
        return false;
    size_t hl = strlen(o->host), dl = strlen(c->host);
    return hl > dl && o->host[hl - dl - 1] == '.' && strcmp(o->host + hl - dl, c->host) == 0;
}

static int pw_cookie_read(const json_val *v, size_t i, double now, pw_cookie *c, char *err,
                          size_t errlen)
{
    if (cli_cookie_check(v, i, true, err, errlen))
        return -1;
    const json_val *x;
    c->v = v;
    size_t dl;
    const char *d = json_str(json_get(v, "domain"), &dl);
    if (dl > HOST_MAX + 1 || (d[0] == '.' && !d[1]))
        return cli_seterr(err, errlen, "cookies[%zu]: bad domain", i);
    for (size_t k = 0; k <= dl; k++) {
        char ch = d[k];
        c->domain[k] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
    }
    c->host = c->domain[0] == '.' ? c->domain + 1 : c->domain;
    for (const char *p = c->host; *p; p++) {
        char ch = *p;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
              ch == '.' || ch == '_' || ch == ':' || ch == '[' || ch == ']'))
            return cli_seterr(err, errlen, "cookies[%zu]: the domain is not a host name", i);
    }
    c->secure = json_bool(json_get(v, "secure"));
    c->expires = -1;
    if ((x = json_get(v, "expires"))) {
        double e = json_num(x);
        if (e != -1 && !(e >= 0 && e < 1e11))
            return cli_seterr(err, errlen, "cookies[%zu]: expires is neither -1 nor a time", i);
        c->expires = e;
        c->dropped = e >= 0 && e <= now;
    }
    if ((x = json_get(v, "_crHasCrossSiteAncestor")) && !cli_is_bool(x))
        return cli_seterr(err, errlen, "cookies[%zu]: bad _crHasCrossSiteAncestor", i);
    return 0;
}

/* One cookie as session state v1 writes it (Network.CookieParam-shaped). */
static void pw_cookie_write(json_w *w, const pw_cookie *c)
{
    const json_val *v = c->v, *x;
    json_w_obj_begin(w);
    size_t n;
    const char *s;
    json_w_key(w, "name");
    s = json_str(json_get(v, "name"), &n);
    json_w_strn(w, s, n);
    json_w_key(w, "value");
    s = json_str(json_get(v, "value"), &n);
    json_w_strn(w, s, n);
    json_w_key(w, "domain");
    json_w_str(w, c->domain);
    json_w_key(w, "path");
    json_w_str(w, json_get_str(v, "path"));
    json_w_key(w, "secure");
    json_w_bool(w, c->secure);
    json_w_key(w, "httpOnly");
    json_w_bool(w, json_bool(json_get(v, "httpOnly")));
    if ((x = json_get(v, "sameSite"))) {
        json_w_key(w, "sameSite");
        json_w_str(w, json_str(x, NULL));
    }
    if (c->expires >= 0) {
        json_w_key(w, "expires");
        json_w_num(w, c->expires);
    }
    if ((x = json_get(v, "partitionKey"))) {
        json_w_key(w, "partitionKey");
        if (cli_is_str(x)) {    /* Playwright: the top-level site, plus a flag beside it */
            json_w_obj_begin(w);
            json_w_key(w, "topLevelSite");
            json_w_str(w, json_str(x, NULL));
            json_w_key(w, "hasCrossSiteAncestor");
            json_w_bool(w, json_bool(json_get(v, "_crHasCrossSiteAncestor")));
            json_w_obj_end(w);
        } else {
            json_w_val(w, x);
        }
    }
    json_w_obj_end(w);
}

/* Build the session state v1 of origin o. *expiry: the latest cookie
 * expiry when every cookie is persistent and no localStorage is kept (the
 * session is surely dead after it), else 0. New buffer; NULL on error. */
static char *pw_session(const pw_cookie *cs, size_t nc, const pw_origin *o, size_t *len,
                        size_t *ncook, size_t *nitems, int64_t *expiry)
{
    json_w w;
    json_w_init_secret(&w);
    w.max = VAULT_BLOB_MAX;
    json_w_obj_begin(&w);
    json_w_key(&w, "version");
    json_w_int(&w, 1);
    json_w_key(&w, "cookies");
    json_w_arr_begin(&w);
    double latest = 0;
    bool persistent = true;
    *ncook = *nitems = 0;
    for (size_t i = 0; i < nc; i++) {
        if (!cookie_for(&cs[i], o))
            continue;
        pw_cookie_write(&w, &cs[i]);
        (*ncook)++;
        if (cs[i].expires < 0)
            persistent = false;
        else if (cs[i].expires > latest)
            latest = cs[i].expires;
    }
    json_w_arr_end(&w);
    json_w_key(&w, "localStorage");
    json_w_obj_begin(&w);
    if (o->ls && json_len(o->ls)) {
        json_w_key(&w, o->origin);
        json_w_arr_begin(&w);
        for (const json_val *it = json_first(o->ls); it; it = json_next(it), (*nitems)++) {
            size_t n;
            const char *s;
            json_w_arr_begin(&w);
            s = json_str(json_get(it, "name"), &n);
            json_w_strn(&w, s, n);
            s = json_str(json_get(it, "value"), &n);
            json_w_strn(&w, s, n);
            json_w_arr_end(&w);
        }
        json_w_arr_end(&w);
    }
    json_w_obj_end(&w);
    json_w_obj_end(&w);
    *expiry = persistent && *ncook && !*nitems ? (int64_t)latest + 1 : 0;
    if (json_w_error(&w)) {
        json_w_free(&w);        /* a secret writer: zeroed */
        return NULL;
    }
    return json_w_take(&w, len);
}

static int pw_origins_read(const json_val *arr, pw_origin *os, size_t *n, char *err,
                           size_t errlen)
{
    size_t i = 0;
    for (const json_val *e = json_first(arr); e; e = json_next(e), i++) {
        const char *o = json_get_str(e, "origin");
        char why[128];
        if (json_type_of(e) != JSON_OBJECT || !o)
            return cli_seterr(err, errlen, "origins[%zu]: no \"origin\" string", i);
        pw_origin *po = &os[*n];
        if (cli_origin_parse(o, po->origin, sizeof po->origin, &po->https, po->host,
                         sizeof po->host, why, sizeof why))
            return cli_seterr(err, errlen, "origins[%zu]: %s", i, why);
        for (size_t k = 0; k < *n; k++)
            if (strcmp(os[k].origin, po->origin) == 0)
                return cli_seterr(err, errlen, "origins[%zu]: %s appears twice", i, po->origin);
        const json_val *ls = json_get(e, "localStorage");
        if (ls && json_type_of(ls) != JSON_ARRAY)
            return cli_seterr(err, errlen, "origins[%zu]: localStorage is not an array", i);
        if (json_len(ls) > LS_ITEMS_MAX)
            return cli_seterr(err, errlen, "origins[%zu]: more than %u localStorage items", i,
                          LS_ITEMS_MAX);
        size_t k = 0;
        for (const json_val *it = json_first(ls); it; it = json_next(it), k++)
            if (json_type_of(it) != JSON_OBJECT || !cli_is_str(json_get(it, "name")) ||
                !cli_is_str(json_get(it, "value")))
                return cli_seterr(err, errlen, "origins[%zu].localStorage[%zu]: not a "
                              "{name, value} pair of strings", i, k);
        po->ls = ls;
        (*n)++;
    }
    return 0;
}

static int cmd_import_playwright(const char *file, bool force, const char *identity)
{
    char *buf = NULL, err[512];
    size_t len = 0;
    if (read_file(file, PW_FILE_MAX, &buf, &len, err, sizeof err))
        return failf("import", "%s", err);
    json_err je = {0};
    json_doc *d = cli_parse_strict(buf, len, PW_FILE_MAX, PW_DEPTH, &je);
    wipe_free(buf, len + 1);
    if (!d)
        return failf("import", "%s: not a valid storageState file: %s at byte %zu", file,
                     je.msg ? je.msg : json_strerror(je.code), je.offset);
    const json_val *r = json_doc_root(d), *cookies = json_get(r, "cookies");
    const json_val *origins = json_get(r, "origins");
    pw_cookie *cs = NULL;
    pw_origin *os = NULL;
    size_t nc = json_len(cookies), no = 0, nbase = 0;
    int rc = EXIT_FAIL;
    vault *v = NULL;
    if (json_type_of(r) != JSON_OBJECT || (!cookies && !origins) ||
        (cookies && json_type_of(cookies) != JSON_ARRAY) ||
        (origins && json_type_of(origins) != JSON_ARRAY)) {
        failf("import", "%s: not a storageState file (an object with \"cookies\" and "
              "\"origins\" arrays)", file);
        goto done;
    }
    if (nc > PW_COOKIES_MAX || json_len(origins) > PW_ORIGINS_MAX) {
        failf("import", "%s: more than %u cookies or %u origins", file, PW_COOKIES_MAX,
              PW_ORIGINS_MAX);
        goto done;
    }
    cs = calloc(nc + 1, sizeof *cs);
    os = calloc(json_len(origins) + nc + 1, sizeof *os);
    if (!cs || !os) {
        failf("import", "out of memory");
        goto done;
    }
    double now = (double)time(NULL);
    size_t i = 0, live = 0;
    for (const json_val *c = json_first(cookies); c; c = json_next(c), i++) {
        if (pw_cookie_read(c, i, now, &cs[i], err, sizeof err)) {
            failf("import", "%s: %s", file, err);
            goto done;
        }
        live += !cs[i].dropped;
    }
    if (origins && pw_origins_read(origins, os, &no, err, sizeof err)) {
        failf("import", "%s: %s", file, err);
        goto done;
    }
    /* A cookie that no listed origin receives gets a session of its own at
     * https://<its domain>, one per domain. */
    nbase = no;
    for (i = 0; i < nc; i++) {
        bool placed = cs[i].dropped;
        for (size_t k = 0; k < nbase && !placed; k++)
            placed = cookie_for(&cs[i], &os[k]);
        if (placed)
            continue;
        char url[HOST_MAX + 16], why[128];
        snprintf(url, sizeof url, "https://%s", cs[i].host);
        pw_origin *po = &os[no];
        if (cli_origin_parse(url, po->origin, sizeof po->origin, &po->https, po->host,
                         sizeof po->host, why, sizeof why)) {
            failf("import", "%s: cookies[%zu]: the domain makes no origin: %s", file, i, why);
            goto done;
        }
        bool dup = false;
        for (size_t k = nbase; k < no && !dup; k++)
            dup = strcmp(os[k].origin, po->origin) == 0;
        if (!dup)
            no++;
    }
    /* Build every session before storing any, and refuse before writing
     * anything when one would replace a stored session without --force. */
    char **blobs = calloc(no + 1, sizeof *blobs);
    size_t *lens = calloc(no + 1, sizeof *lens), *ncs = calloc(no + 1, sizeof *ncs);
    size_t *nis = calloc(no + 1, sizeof *nis);
    int64_t *exps = calloc(no + 1, sizeof *exps);
    if (!blobs || !lens || !ncs || !nis || !exps) {
        failf("import", "out of memory");
        goto free_blobs;
    }
    size_t stored = 0;
    for (i = 0; i < no; i++) {
        blobs[i] = pw_session(cs, nc, &os[i], &lens[i], &ncs[i], &nis[i], &exps[i]);
        if (!blobs[i]) {
            failf("import", "%s: the session of %s is too large or cannot be built", file,
                  os[i].origin);
            goto free_blobs;
        }
        stored += ncs[i] || nis[i];
    }
    if (!stored) {
        failf("import", "%s: nothing to import (no unexpired cookie, no localStorage)", file);
        goto free_blobs;
    }
    if (!(v = store_open("import", true)))
        goto free_blobs;
    for (i = 0; i < no && !force; i++) {
        if ((ncs[i] || nis[i]) && import_refuse(v, os[i].origin,
                                                identity ? identity : "default"))
            goto free_blobs;
    }
    rc = EXIT_OK;
    for (i = 0; i < no; i++) {
        if (!ncs[i] && !nis[i]) {
            printf("skipped %s: no cookie and no localStorage for it\n", os[i].origin);
            continue;
        }
        if (vault_put(v, os[i].origin, identity ? identity : "default",
                      (const uint8_t *)blobs[i], lens[i], exps[i], err, sizeof err)) {
            rc = failf("import", "%s: %s (sessions listed above were imported)",
                       os[i].origin, err);
            break;
        }
        printf("imported %s: %zu cookies, %zu localStorage items\n", os[i].origin, ncs[i],
               nis[i]);
    }
    if (rc == EXIT_OK && live < nc)
        printf("skipped %zu expired cookies\n", nc - live);
free_blobs:
    for (i = 0; blobs && i < no; i++)
        wipe_free(blobs[i], lens[i]);
    free(blobs);
    free(lens);
    free(ncs);
    free(nis);
    free(exps);
done:
    vault_close(v);
    free(cs);
    free(os);
    json_doc_free(d);
    return rc;
}

/* ------------------------------------------------------------------ */
/* argument parsing */

/* Options that look like a way to pass the passphrase: refused by name. */
static bool passphrase_option(const char *name)
{
    return strncmp(name, "--pass", 6) == 0 || strncmp(name, "--pw", 4) == 0 ||
           strncmp(name, "--secret", 8) == 0;
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("cdpgate vault: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (see cdpgate vault --help)\n", stderr);
    return EXIT_USAGE;
}

int cli_vault(const cli_opts *o, int argc, char **argv)
{
    const char *pos[4] = {0};
    int npos = 0, pfd = -1;
    bool as_json = false, playwright = false, force = false, opts_done = false;
    const char *output = o ? o->output : NULL;
    const char *identity = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (opts_done || a[0] != '-' || !a[1]) {
            if (npos == 3)
                return usage_error("too many arguments%s", "");
            pos[npos++] = a;
            continue;
        }
        char name[64];
        const char *val = NULL, *eq = strchr(a, '=');
        size_t nl = eq && a[1] == '-' ? (size_t)(eq - a) : strlen(a);
        snprintf(name, sizeof name, "%.*s", (int)(nl < 63 ? nl : 63), a);
        if (eq && a[1] == '-')
            val = eq + 1;
        bool has_val = strcmp(name, "--passphrase-fd") == 0 || strcmp(name, "-o") == 0 ||
                       strcmp(name, "--output") == 0 || strcmp(name, "--identity") == 0;
        if (has_val && !val) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", name);
            val = argv[++i];
        } else if (!has_val && val) {
            if (passphrase_option(name))
                return usage_error("%s: a passphrase is never taken from the command line; "
                                   "it is read from the terminal or --passphrase-fd N", name);
            return usage_error("%s takes no value", name);
        }
        if (strcmp(name, "--") == 0) {
            opts_done = true;
        } else if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
            fputs(VAULT_USAGE, stdout);
            return EXIT_OK;
        } else if (strcmp(name, "--json") == 0) {
            as_json = true;
        } else if (strcmp(name, "--playwright") == 0) {
            playwright = true;
        } else if (strcmp(name, "--force") == 0) {
            force = true;
        } else if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0) {
            output = val;
        } else if (strcmp(name, "--identity") == 0) {
            if (!*val || strlen(val) > 200)
                return usage_error("--identity wants a name (1..200 bytes)%s", "");
            identity = val;
        } else if (strcmp(name, "--passphrase-fd") == 0) {
            char *end;
            long fd = strtol(val, &end, 10);
            if (!*val || *end || fd < 0 || fd > 1023)
                return usage_error("--passphrase-fd wants a file descriptor number (0..1023)"
                                   "%s", "");
            pfd = (int)fd;
        } else if (passphrase_option(name)) {
            return usage_error("%s: a passphrase is never taken from the command line; it "
                               "is read from the terminal or --passphrase-fd N", name);
        } else {
            return usage_error("unknown option %s", name);
        }
    }
    const char *sub = pos[0];
    if (!sub) {
        fputs(VAULT_USAGE, stderr);
        return EXIT_USAGE;
    }
    bool is_import = strcmp(sub, "import") == 0, is_export = strcmp(sub, "export") == 0;
    if (as_json && strcmp(sub, "list") != 0)
        return usage_error("--json is for list only%s", "");
    if (playwright && !is_import)
        return usage_error("--playwright is for import only%s", "");
    if (pfd >= 0 && !(is_export || (is_import && !playwright)))
        return usage_error("--passphrase-fd is for export and import only%s", "");
    if (output && !is_export)
        return usage_error("-o is for export only%s", "");
    if (identity && !is_import)
        return usage_error("--identity is for import only%s", "");
    if (force && !(is_export || is_import))
        return usage_error("--force is for export and import only%s", "");
    if (strcmp(sub, "list") == 0) {
        if (npos != 1)
            return usage_error("usage: cdpgate vault list [--json]%s", "");
        return cmd_list(as_json);
    }
    if (strcmp(sub, "rm") == 0) {
        if (npos != 2)
            return usage_error("usage: cdpgate vault rm ORIGIN%s", "");
        return cmd_rm(pos[1]);
    }
    if (is_export) {
        if (npos != 2 || !output)
            return usage_error("usage: cdpgate vault export ORIGIN -o FILE%s", "");
        return cmd_export(pos[1], output, pfd, force);
    }
    if (is_import) {
        if (npos != 2)
            return usage_error("usage: cdpgate vault import [--playwright] FILE%s", "");
        return playwright ? cmd_import_playwright(pos[1], force, identity)
                          : cmd_import_export(pos[1], pfd, force, identity);
    }
    return usage_error("unknown vault command '%s'", sub);
}
