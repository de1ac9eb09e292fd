/*
 * writer.c — the evidence folder: creating it, the files a record names
 * (screenshots, reports), the manifest and the end of a session.
 *
 * The folder is made 0700 (an existing one must be empty: a task's
 * evidence is never mixed with another's); records.jsonl is created with
 * O_EXCL, mode 0600, and appended to; every other file is written all or
 * nothing (base_file_put) under a name that must not exist yet.
 */
#include "evidence/evidence_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int evidence_fail(evidence_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

/* 0 when dir is a directory with nothing in it. */
static int dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *de;
    int rc = 0;
    while (!rc && (de = readdir(d)))
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            rc = -1;
    closedir(d);
    return rc;
}

static void evidence_free(evidence *e)
{
    for (size_t i = 0; i < e->nsec; i++) {
        base_memzero(e->sec[i], e->seclen[i]);
        free(e->sec[i]);
    }
    free(e->sec);
    free(e->seclen);
    for (size_t i = 0; i < e->nmeta; i++) {
        free(e->mkey[i]);
        free(e->mval[i]);
    }
    json_w_free(&e->w);
    if (e->fd >= 0)
        close(e->fd);
    if (e->dirfd >= 0)
        close(e->dirfd);
    free(e->dir);
    free(e->task);
    free(e);
}

evidence *evidence_open(const char *dir, const char *task, evidence_err *err)
{
    if (!dir || !*dir) {
        evidence_fail(err, EVIDENCE_EINVAL, "evidence: no folder given");
        return NULL;
    }
    if (mkdir(dir, 0700) != 0 && (errno != EEXIST || dir_empty(dir) != 0)) {
        evidence_fail(err, EVIDENCE_EIO, "evidence: %s: %s", dir,
                      errno == EEXIST ? "exists and is not an empty folder" : strerror(errno));
        return NULL;
    }
    evidence *e = calloc(1, sizeof *e);
    if (!e) {
        evidence_fail(err, EVIDENCE_ENOMEM, "evidence: out of memory");
        return NULL;
    }
    e->fd = e->dirfd = -1;
    json_w_init(&e->w);
    memset(e->prev, '0', EVIDENCE_HEX_LEN);
    evidence_time_now(e->started);
    e->dir = base_strdup(dir);
    e->task = task ? base_strdup(task) : NULL;
    e->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (e->dirfd >= 0)
        e->fd = openat(e->dirfd, "records.jsonl",
                       O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (!e->dir || (task && !e->task) || e->fd < 0) {
        evidence_fail(err, EVIDENCE_EIO, "evidence: %s/records.jsonl: %s", dir,
                      e->dir ? strerror(errno) : "out of memory");
        evidence_free(e);
        return NULL;
    }
    return e;
}

const char *evidence_dir(const evidence *e)
{
    return e ? e->dir : NULL;
}

uint64_t evidence_count(const evidence *e)
{
    return e ? e->n : 0;
}

static const char *const MANIFEST_KEYS[] = {"format", "task", "records", "final", "started",
                                            "ended", NULL};

int evidence_meta_set(evidence *e, const char *key, const char *value)
{
    if (!e || !evidence_key_ok(key) || !value)
        return EVIDENCE_EINVAL;
    for (size_t i = 0; MANIFEST_KEYS[i]; i++)
        if (strcmp(key, MANIFEST_KEYS[i]) == 0)
            return EVIDENCE_EINVAL;
    size_t i = 0;
    while (i < e->nmeta && strcmp(e->mkey[i], key) != 0)
        i++;
    if (i == EVIDENCE_META_MAX)
        return EVIDENCE_EINVAL;
    char *v = evidence_scrub(e, value, strnlen(value, 1024), NULL);
    char *k = i == e->nmeta ? base_strdup(key) : NULL;
    if (!v || (i == e->nmeta && !k)) {
        free(v);
        free(k);
        return EVIDENCE_ENOMEM;
    }
    if (i == e->nmeta) {
        e->mkey[i] = k;
        e->mval[i] = NULL;
        e->nmeta++;
    }
    free(e->mval[i]);
    e->mval[i] = v;
    return 0;
}

/* Write a new file name in the folder, all or nothing. */
static int put_file(evidence *e, const char *name, const void *data, size_t n,
                    evidence_err *err)
{
    int step = 0;
    if (base_file_put(e->dirfd, name, data, n, BASE_PUT_NEW, &step) != 0)
        return evidence_fail(err, EVIDENCE_EIO, "evidence: %s/%s: %s", e->dir, name,
                             strerror(errno));
    return 0;
}

int evidence_shot(evidence *e, const uint8_t *img, size_t n, const char *note,
                  evidence_err *err)
{
    if (!e || !img || n < 4)
        return evidence_fail(err, EVIDENCE_EINVAL, "evidence: no image");
    bool png = memcmp(img, "\x89PNG", 4) == 0;
    bool jpeg = img[0] == 0xff && img[1] == 0xd8;
    if (!png && !jpeg)
        return evidence_fail(err, EVIDENCE_EINVAL, "evidence: the image is not PNG or JPEG");
    if (e->shots >= 9999)
        return evidence_fail(err, EVIDENCE_ELIMIT, "evidence: more than 9999 screenshots");
    char name[32], hex[EVIDENCE_HEX_LEN + 1];
    snprintf(name, sizeof name, "shot-%04u.%s", (unsigned)(e->shots + 1), png ? "png" : "jpeg");
    int rc = put_file(e, name, img, n, err);
    if (rc)
        return rc;
    e->shots++;
    evidence_hash_hex(img, n, hex);
    evidence_rec_begin(e, "shot");
    evidence_rec_str(e, "file", name);
    evidence_rec_str(e, "sha256", hex);
    evidence_rec_int(e, "bytes", (int64_t)n);
    evidence_rec_str(e, "format", png ? "png" : "jpeg");
    if (note)
        evidence_rec_str(e, "note", note);
    return evidence_rec_end(e, err);
}

char *evidence_read_file(int dirfd, const char *name, size_t max, size_t *len)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
        int en = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
        close(fd);
        errno = en;
        return NULL;
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *buf = malloc(n + 1);
    while (buf && got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            free(buf);
            buf = NULL;
            errno = r == 0 ? EIO : errno;
            break;
        }
        got += (size_t)r;
    }
    close(fd);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

int evidence_file(evidence *e, const char *kind, const char *path, evidence_err *err)
{
    if (!e || !path || !*path)
        return evidence_fail(err, EVIDENCE_EINVAL, "evidence: no file named");
    bool inside = !strchr(path, '/') && path[0] != '.';
    if (!inside && path[0] != '/')
        return evidence_fail(err, EVIDENCE_EINVAL, "evidence: a file is named by a name in the "
                             "folder or an absolute path");
    size_t n = 0;
    char *buf = evidence_read_file(inside ? e->dirfd : AT_FDCWD, path, EVIDENCE_FILE_MAX, &n);
    if (!buf)
        return evidence_fail(err, EVIDENCE_EIO, "evidence: %s: %s", path, strerror(errno));
    char hex[EVIDENCE_HEX_LEN + 1];
    evidence_hash_hex(buf, n, hex);
    free(buf);
    int rc = evidence_rec_begin(e, kind);
    if (rc)
        return evidence_fail(err, rc, "evidence: bad record kind");
    evidence_rec_str(e, "file", path);
    evidence_rec_str(e, "sha256", hex);
    evidence_rec_int(e, "bytes", (int64_t)n);
    return evidence_rec_end(e, err);
}

int evidence_put(evidence *e, const char *name, const void *data, size_t n, bool scrub,
                 char hex[EVIDENCE_HEX_LEN + 1], evidence_err *err)
{
    size_t len = name ? strlen(name) : 0;
    bool ok = len > 0 && len < 128 && name[0] != '.' && strcmp(name, "records.jsonl") != 0 &&
              strcmp(name, "manifest.json") != 0 && strcmp(name, "index.html") != 0;
    for (size_t i = 0; ok && i < len; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
             (name[i] >= '0' && name[i] <= '9') || name[i] == '.' || name[i] == '_' ||
             name[i] == '-';
    if (!e || !ok || (!data && n))
        return evidence_fail(err, EVIDENCE_EINVAL, "evidence: a file's name must be a plain "
                             "new name in the folder");
    if (n > EVIDENCE_FILE_MAX)
        return evidence_fail(err, EVIDENCE_ELIMIT, "evidence: %s: over %zu bytes", name,
                             EVIDENCE_FILE_MAX);
    size_t sn = n;
    char *s = scrub ? evidence_scrub(e, data, n, &sn) : NULL;
    if (scrub && !s)
        return evidence_fail(err, EVIDENCE_ENOMEM, "evidence: out of memory");
    const void *out = s ? (const void *)s : data;
    int rc = put_file(e, name, out, sn, err);
    if (!rc)
        evidence_hash_hex(out, sn, hex);
    free(s);
    return rc;
}

/* manifest.json (replacing none). */
static int write_manifest(evidence *e, evidence_err *err)
{
    json_w w;
    json_w_init(&w);
    char ended[32];
    evidence_time_now(ended);
    json_w_obj_begin(&w);
    json_w_key(&w, "format");
    json_w_str(&w, "cdpgate-evidence/1");
    json_w_key(&w, "task");
    json_w_str(&w, e->task);
    json_w_key(&w, "records");
    json_w_uint(&w, e->n);
    json_w_key(&w, "final");
    json_w_str(&w, e->prev);
    json_w_key(&w, "started");
    json_w_str(&w, e->started);
    json_w_key(&w, "ended");
    json_w_str(&w, ended);
    for (size_t i = 0; i < e->nmeta; i++) {
        json_w_key(&w, e->mkey[i]);
        json_w_str(&w, e->mval[i]);
    }
    json_w_obj_end(&w);
    size_t n = 0;
    char *m = json_w_error(&w) ? NULL : json_w_take(&w, &n);
    json_w_free(&w);
    if (!m)
        return evidence_fail(err, EVIDENCE_ENOMEM, "evidence: out of memory");
    int rc = put_file(e, "manifest.json", m, n, err);
    free(m);
    return rc;
}

int evidence_close(evidence *e, char final_hex[EVIDENCE_HEX_LEN + 1], evidence_err *err)
{
    if (!e)
        return 0;
    int rc = 0;
    if (fsync(e->fd) != 0 && errno != EINVAL)
        rc = evidence_fail(err, EVIDENCE_EIO, "evidence: %s/records.jsonl: %s", e->dir,
                           strerror(errno));
    if (!rc)
        rc = write_manifest(e, err);
    size_t n = 0;
    char *all = rc ? NULL : evidence_read_file(e->dirfd, "records.jsonl", EVIDENCE_FILE_MAX, &n);
    if (!rc && !all)
        rc = evidence_fail(err, EVIDENCE_EIO, "evidence: records.jsonl could not be read back");
    if (!rc)
        rc = evidence_viewer_write(e, all, n, err);
    free(all);
    if (final_hex)
        memcpy(final_hex, e->prev, EVIDENCE_HEX_LEN + 1);
    evidence_free(e);
    return rc;
}
