/*
 * audit.c — the audit log: one JSON object per line, appended with one
 * write(2) per line to a file opened O_APPEND (mode 0600), and the text
 * helpers that keep every line valid UTF-8 JSON whatever a page named its
 * buttons.
 *
 * Sequence numbers are unique across processes sharing a log: each line is
 * written under an fcntl write lock on the file, after reading the tail the
 * other writers added since our last write (their largest seq), so seq only
 * grows in file order. Lock failures (a file system without locks, a
 * character device) are ignored: one writer still numbers correctly.
 *
 * Pending outcomes. A decision line with "pending":true allowed a
 * consequential or confirmed action; it is settled by an outcome line whose
 * "ref" is its seq. At gate_new the log (its last GATE_AUDIT_SCAN_MAX bytes)
 * is read back; decisions still unsettled become the pending list, except
 * those written by another process that is still running ("pid"), whose
 * outcomes may yet come. Lines are read in bounded pieces; a line longer
 * than SCAN_LINE is skipped.
 */
#include "gate/gate_int.h"
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SCAN_LINE 65536u
#define TAIL_READ 16384u

/* ---- text ---- */

/* Length of the valid UTF-8 sequence at s (n bytes left), else 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t l = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3
             : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!l || l > n || (l > 1 && !json_utf8_valid(s, l)))
        return 0;
    return l;
}

void gate_text_copy(char *out, size_t cap, const char *s, size_t max)
{
    if (!cap)
        return;
    size_t o = 0, i = 0, n = s ? strlen(s) : 0;
    if (max > cap - 1)
        max = cap - 1;
    while (i < n) {
        const unsigned char *p = (const unsigned char *)s + i;
        size_t l = utf8_seq(p, n - i);
        if (o + (l ? l : 1) > max)
            break;
        if (!l || p[0] < 0x20 || p[0] == 0x7f) {
            out[o++] = p[0] == '\t' || p[0] == '\n' ? ' ' : '?';
            i++;
            continue;
        }
        /* Never raw (gate_char_escape): bidi, invisible, tags, C1. */
        char esc[GATE_CHAR_ESC_MAX];
        size_t used, k = l > 1 ? gate_char_escape(esc, (const char *)p, l, &used) : 0;
        if (k) {
            if (o + k > max)
                break;
            memcpy(out + o, esc, k);
            o += k;
            i += l;
            continue;
        }
        memcpy(out + o, p, l);
        o += l;
        i += l;
    }
    out[o] = 0;
}

void gate_text_clean(char *s)
{
    size_t n = strlen(s), i = 0;
    while (i < n) {
        unsigned char *p = (unsigned char *)s + i;
        size_t l = utf8_seq(p, n - i);
        if (!l || p[0] < 0x20 || p[0] == 0x7f) {
            /* A sequence cut at the end by snprintf: drop it. */
            if (p[0] >= 0xC0 && n - i < 4 && !l) {
                s[i] = 0;
                return;
            }
            *p = '?';
            l = 1;
        }
        i += l;
    }
}

void gate_w_text(json_w *w, const char *key, const char *s, size_t max)
{
    char buf[2304];
    if (key)
        json_w_key(w, key);
    if (!s) {
        json_w_null(w);
        return;
    }
    gate_text_copy(buf, sizeof buf, s, max);
    json_w_str(w, buf);
}

/* ---- time ---- */

int64_t gate_now(const gate *gt)
{
    return gt->now ? gt->now(gt->now_ud) : (int64_t)time(NULL);
}

void gate_time_format(int64_t t, char *out, size_t cap)
{
    struct tm tm;
    time_t tt = (time_t)t;
    if ((int64_t)tt != t || !gmtime_r(&tt, &tm) ||
        !strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, cap, "1970-01-01T00:00:00Z");
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int gate_time_parse(const char *s, int64_t *out)
{
    static const int MDAYS[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int y, mo, d, h, mi, se, oh = 0, om = 0;
    if (strlen(s) < 20 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
        s[7] != '-' || digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
        digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
        digits(s + 17, 2, &se))
        return -1;
    const char *p = s + 19;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    int sign = 0;
    if ((*p == 'Z' || *p == 'z') && !p[1])
        ;
    else if ((*p == '+' || *p == '-') && strlen(p) == 6 && !digits(p + 1, 2, &oh) &&
             p[3] == ':' && !digits(p + 4, 2, &om))
        sign = *p == '+' ? 1 : -1;
    else
        return -1;
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > MDAYS[mo - 1] || (mo == 2 && d == 29 && !leap) ||
        h > 23 || mi > 59 || se > 60 || oh > 23 || om > 59)
        return -1;
    if (se == 60)
        se = 59;
    *out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se -
           sign * (oh * 3600 + om * 60);
    return 0;
}

/* ---- reading the log back ---- */

/* The number after the first "key": in the line, else 0. */
static uint64_t line_uint(const char *line, size_t n, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl < n; i++) {
        if (line[i] != '"' || memcmp(line + i, key, kl) != 0)
            continue;
        uint64_t v = 0;
        for (i += kl; i < n && line[i] >= '0' && line[i] <= '9'; i++)
            v = v > UINT64_MAX / 10 ? UINT64_MAX : v * 10 + (uint64_t)(line[i] - '0');
        return v;
    }
    return 0;
}

static bool line_has(const char *line, size_t n, const char *needle)
{
    size_t kl = strlen(needle);
    for (size_t i = 0; i + kl <= n; i++)
        if (line[i] == needle[0] && memcmp(line + i, needle, kl) == 0)
            return true;
    return false;
}

/* Drop the pending entry for seq (an outcome was written). */
static void gate_pending_drop(gate *gt, uint64_t seq)
{
    for (size_t i = 0; i < gt->npend; i++) {
        if (gt->pend[i].seq != seq)
            continue;
        free(gt->pend[i].text);
        gt->pend[i] = gt->pend[--gt->npend];
        return;
    }
}

/* A process other than this one that still runs wrote the line. */
static bool writer_alive(const json_val *root)
{
    int64_t pid = json_get_int(root, "pid", 0);
    if (pid <= 0 || pid > INT32_MAX || (pid_t)pid == getpid())
        return false;
    return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

static int pending_add(gate *gt, const json_val *root)
{
    if (writer_alive(root))
        return 0;
    if (gt->npend == GATE_PENDING_MAX) {
        gt->pend_dropped++;
        return 0;
    }
    gate_pending *np = base_grow(gt->pend, gt->npend + 1, &gt->cappend, sizeof *np, 8);
    if (!np)
        return GATE_ENOMEM;
    gt->pend = np;
    char act[64], tgt[256], org[GATE_ORIGIN_MAX + 8], tm[40], text[800];
    uint64_t seq = 0;
    int64_t iv;
    if (json_int(json_get(root, "seq"), &iv) && iv > 0)
        seq = (uint64_t)iv;
    gate_text_copy(act, sizeof act, json_get_str(root, "action"), 60);
    gate_text_copy(tgt, sizeof tgt, json_get_str(root, "target"), 200);
    gate_text_copy(org, sizeof org, json_get_str(root, "origin"), GATE_ORIGIN_MAX);
    gate_text_copy(tm, sizeof tm, json_get_str(root, "time"), 32);
    snprintf(text, sizeof text, "outcome unknown: %s%s%s on %s at %s (decision #%llu); "
             "it was not retried", act, *tgt ? " " : "", tgt, *org ? org : "(no origin)", tm,
             (unsigned long long)seq);
    gate_text_clean(text);
    char *t = malloc(strlen(text) + 1);
    if (!t)
        return GATE_ENOMEM;
    memcpy(t, text, strlen(text) + 1);
    gate_pending_drop(gt, seq);
    gt->pend[gt->npend].seq = seq;
    gt->pend[gt->npend].text = t;
    gt->npend++;
    return 0;
}

static int scan_line(gate *gt, const char *line, size_t n)
{
    uint64_t seq = line_uint(line, n, "\"seq\":");
    if (seq > gt->seq)
        gt->seq = seq;
    bool pend = line_has(line, n, "\"pending\":true");
    bool outc = line_has(line, n, "\"event\":\"outcome\"");
    if (!pend && !outc)
        return 0;
    json_opts o = {SCAN_LINE, 8, 0};
    json_err je;
    json_doc *d = json_parse(line, n, &o, &je);
    if (!d)
        return je.code == JSON_ENOMEM ? GATE_ENOMEM : 0;
    const json_val *r = json_doc_root(d);
    int rc = 0;
    int64_t ref;
    if (outc && json_int(json_get(r, "ref"), &ref) && ref > 0)
        gate_pending_drop(gt, (uint64_t)ref);
    else if (pend && json_bool(json_get(r, "pending")))
        rc = pending_add(gt, r);
    json_doc_free(d);
    return rc;
}

static int scan_log(gate *gt, off_t size)
{
    off_t pos = size > GATE_AUDIT_SCAN_MAX ? size - GATE_AUDIT_SCAN_MAX : 0;
    bool skipping = pos > 0;            /* the first, partial line */
    char *buf = malloc(2 * SCAN_LINE);
    if (!buf)
        return GATE_ENOMEM;
    size_t have = 0;
    int rc = 0;
    while (!rc && pos < size) {
        ssize_t r = pread(gt->fd, buf + have, 2 * SCAN_LINE - have, pos);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        pos += r;
        have += (size_t)r;
        size_t b = 0;
        char *nl;
        while (!rc && (nl = memchr(buf + b, '\n', have - b))) {
            size_t e = (size_t)(nl - buf);
            if (!skipping)
                rc = scan_line(gt, buf + b, e - b);
            skipping = false;
            b = e + 1;
        }
        memmove(buf, buf + b, have - b);
        have -= b;
        if (have == 2 * SCAN_LINE) {
            skipping = true;
            have = 0;
        }
    }
    free(buf);
    return rc;
}

int gate_audit_open(gate *gt, const char *path, gate_err *err)
{
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (err)
            snprintf(err->msg, sizeof err->msg, "audit: cannot open %s: %s", path,
                     strerror(errno));
        return GATE_EIO;
    }
    gt->fd = fd;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        int rc = scan_log(gt, st.st_size);
        if (rc) {
            if (err)
                snprintf(err->msg, sizeof err->msg, "audit: out of memory reading %s", path);
            return rc;
        }
        gt->known_end = st.st_size;
    }
    return 0;
}

void gate_audit_close(gate *gt)
{
    if (gt->fd >= 0)
        close(gt->fd);
    gt->fd = -1;
    for (size_t i = 0; i < gt->npend; i++)
        free(gt->pend[i].text);
    free(gt->pend);
    gt->pend = NULL;
    gt->npend = gt->cappend = 0;
}

/* ---- writing ---- */

static void log_lock(int fd, short type)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = type;
    fl.l_whence = SEEK_SET;
    while (fcntl(fd, F_SETLKW, &fl) < 0 && errno == EINTR)
        ;
}

/* Under the lock: what other writers appended since we last looked. */
static void log_refresh(gate *gt)
{
    struct stat st;
    if (fstat(gt->fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == gt->known_end)
        return;
    char buf[TAIL_READ];
    off_t from = st.st_size > (off_t)TAIL_READ ? st.st_size - (off_t)TAIL_READ : 0;
    ssize_t r = pread(gt->fd, buf, sizeof buf, from);
    size_t b = 0;
    for (size_t i = 0; r > 0 && i < (size_t)r; i++) {
        if (buf[i] != '\n')
            continue;
        uint64_t s = line_uint(buf + b, i - b, "\"seq\":");
        if (s > gt->seq)
            gt->seq = s;
        b = i + 1;
    }
    gt->known_end = st.st_size;
}

/* With no audit log open: the line built for the tap alone. */
static void tap_only(gate *gt, gate_line_fn build, void *ud, uint64_t seq)
{
    json_w w;
    json_w_init(&w);
    build(gt, &w, seq, ud);
    size_t len = 0;
    char *line = json_w_error(&w) ? NULL : json_w_take(&w, &len);
    json_w_free(&w);
    if (line)
        gt->tap(gt->tap_ud, line, len);
    free(line);
}

int gate_audit_line(gate *gt, gate_line_fn build, void *ud, bool sync, uint64_t *seq)
{
    if (gt->fd < 0) {
        *seq = ++gt->seq;
        if (gt->tap)
            tap_only(gt, build, ud, *seq);
        return 0;
    }
    log_lock(gt->fd, F_WRLCK);
    log_refresh(gt);
    *seq = ++gt->seq;
    json_w w;
    json_w_init(&w);
    build(gt, &w, *seq, ud);
    size_t len = 0;
    int rc = json_w_error(&w) == JSON_ENOMEM ? GATE_ENOMEM : json_w_error(&w) ? GATE_EIO : 0;
    char *line = rc ? NULL : json_w_take(&w, &len);
    json_w_free(&w);
    if (!rc && !line)
        rc = GATE_ENOMEM;
    char stackbuf[8192], *out = stackbuf;
    if (!rc && len + 1 > sizeof stackbuf) {
        out = realloc(line, len + 1);
        if (!out)
            rc = GATE_ENOMEM;
        else
            line = NULL;
    } else if (!rc) {
        memcpy(out, line, len);
    }
    if (!rc) {
        out[len] = '\n';
        if (base_write_all(gt->fd, out, len + 1, BASE_NO_DEADLINE, 0, NULL) != 0 ||
            (sync && fsync(gt->fd) != 0 && errno != EINVAL))
            rc = GATE_EIO;
        else
            gt->known_end += (off_t)(len + 1);
    }
    log_lock(gt->fd, F_UNLCK);
    if (!rc && gt->tap)
        gt->tap(gt->tap_ud, out, len);
    if (out != stackbuf)
        free(out);
    free(line);
    return rc;
}
