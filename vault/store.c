/*
 * store.c — the session store on disk.
 *
 *   <dir>/            0700, owned by us          (vault_open checks, every
 *   <dir>/key         0600 key file (default key provider)      call again)
 *   <dir>/lock        0600, locked around every change
 *   <dir>/sessions/   0700
 *       <sha256-hex of origin>.enc    sealed session (blob.c layout)
 *       <sha256-hex of origin>.json   non-secret metadata
 *
 * Invariants:
 *   - Every file is written whole under a temporary name in the same
 *     directory (O_CREAT|O_EXCL, 0600), fsync'd, renamed over the old one,
 *     then the directory is fsync'd: a reader sees the old file or the new
 *     one, never a mix, whatever point a writer dies at.
 *   - Changes (put, rm, the last_used update of get) hold an exclusive
 *     lock on <dir>/lock: an open-file-description lock (F_OFD_SETLK) where
 *     the kernel has it, else a POSIX record lock, taken with a bounded
 *     wait (VAULT_LOCK_TIMEOUT_MS). The kernel drops it when a holder dies,
 *     and temporary files left by a dead writer are removed by the next
 *     put, under the lock (no writer can be using them then).
 *   - .enc is written before .json, and .json is rewritten from the
 *     authenticated contents of .enc on every get, so a crash between the
 *     two renames leaves at worst a stale listing, never a wrong session.
 *   - Every file read is checked first (regular, ours, no group/world bits,
 *     size within its limit) through the descriptor actually read (no
 *     check-then-open race); symlinks are not followed.
 *   - The key lives in the vault struct only and is wiped by vault_close.
 */
#define _GNU_SOURCE 1
#include "vault/vault_int.h"
#include "json/json.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define VAULT_LOCK_TIMEOUT_MS 10000

struct vault {
    char *dir, *sdir;
    int dfd, sfd;
    uint8_t key[32];
    const vault_gcm_backend *be;
};

void vault_origin_name(const char *origin, char out[65])
{
    uint8_t h[32];
    vault_sha256(origin, strlen(origin), h);
    vault_hex(h, 32, out);
}

const char *vault_dir(const vault *v)
{
    return v->dir;
}

/* ---- directories ---- */

static int mkdir_p(const char *path, char *err, size_t errlen)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return vault_seterr(err, errlen, VAULT_EINVAL, "vault directory path empty or too long");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0)
            continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return vault_seterr(err, errlen, VAULT_EIO, "%s: cannot create: %s", buf,
                                strerror(errno));
        buf[i] = c;
    }
    return VAULT_OK;
}

/* Open a directory (at = -1: by path) and check its owner and mode. */
static int open_dir(int at, const char *name, const char *shown, int create, int *fd,
                    char *err, size_t errlen)
{
    if (create && at >= 0 && mkdirat(at, name, 0700) != 0 && errno != EEXIST)
        return vault_seterr(err, errlen, VAULT_EIO, "%s: cannot create: %s", shown,
                            strerror(errno));
    int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (at >= 0 ? O_NOFOLLOW : 0);
    *fd = at >= 0 ? openat(at, name, flags) : open(name, flags);
    if (*fd < 0)
        return vault_seterr(err, errlen, errno == ELOOP ? VAULT_EPERM : VAULT_EIO,
                            "%s: cannot open: %s", shown, strerror(errno));
    struct stat st;
    int rc = fstat(*fd, &st) == 0 ? vault_check_mode(&st, shown, 1, err, errlen)
                                  : vault_seterr(err, errlen, VAULT_EIO, "%s: %s", shown,
                                                 strerror(errno));
    if (rc) {
        close(*fd);
        *fd = -1;
    }
    return rc;
}

/* Both directories, again, before each operation (a chmod after
 * vault_open is caught too). */
static int check_dirs(vault *v, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(v->dfd, &st) != 0)
        return vault_seterr(err, errlen, VAULT_EIO, "%s: %s", v->dir, strerror(errno));
    int rc = vault_check_mode(&st, v->dir, 1, err, errlen);
    if (rc)
        return rc;
    if (fstat(v->sfd, &st) != 0)
        return vault_seterr(err, errlen, VAULT_EIO, "%s: %s", v->sdir, strerror(errno));
    return vault_check_mode(&st, v->sdir, 1, err, errlen);
}

static char *path_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (p) {
        memcpy(p, a, la);
        p[la] = '/';
        memcpy(p + la + 1, b, lb + 1);
    }
    return p;
}

/* The vault's directory (new; NULL with err filled): dir, else
 * $XDG_DATA_HOME/cdpgate, else ~/.local/share/cdpgate. */
static char *root_of(const char *dir, char *err, size_t errlen)
{
    if (dir)
        return strdup(dir);
    const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    char *root = NULL;
    if (x && *x == '/') {
        root = path_join(x, "cdpgate");
    } else if (home && *home) {
        char *share = path_join(home, ".local/share");
        root = share ? path_join(share, "cdpgate") : NULL;
        free(share);
    } else {
        vault_seterr(err, errlen, VAULT_EINVAL,
                     "no vault directory: neither XDG_DATA_HOME nor HOME is set");
        return NULL;
    }
    if (!root)
        vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory");
    return root;
}

int vault_key_file(const char *path, const char *name, bool create, uint8_t key[32], char *err,
                   size_t errlen)
{
    if (path)
        return vault_key_file_at(path, create, key, err, errlen);
    if (!name || !*name || strchr(name, '/'))
        return vault_seterr(err, errlen, VAULT_EINVAL, "no key file name");
    char *root = root_of(NULL, err, errlen);
    if (!root)
        return VAULT_EINVAL;
    int fd = -1, rc = create ? mkdir_p(root, err, errlen)
                      : access(root, F_OK) != 0
                          ? vault_seterr(err, errlen, VAULT_ENOENT, "%s: no such directory", root)
                          : VAULT_OK;
    if (!rc)
        rc = open_dir(-1, root, root, 0, &fd, err, errlen);
    if (fd >= 0)
        close(fd);
    char *full = rc ? NULL : path_join(root, name);
    if (!rc && !full)
        rc = vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory");
    if (!rc)
        rc = vault_key_file_at(full, create, key, err, errlen);
    free(full);
    free(root);
    return rc;
}

vault *vault_open(const char *dir, const vault_keyprov *kp, char *err, size_t errlen)
{
    char *root = root_of(dir, err, errlen);
    if (!root && !dir)
        return NULL;
    vault *v = calloc(1, sizeof *v);
    if (!root || !v) {
        free(root);
        free(v);
        vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory opening the vault");
        return NULL;
    }
    v->dir = root;
    v->dfd = v->sfd = -1;
    v->sdir = path_join(root, "sessions");
    if (!v->sdir) {
        vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory opening the vault");
        goto fail;
    }
    if (mkdir_p(root, err, errlen) || open_dir(-1, root, root, 0, &v->dfd, err, errlen) ||
        open_dir(v->dfd, "sessions", v->sdir, 1, &v->sfd, err, errlen))
        goto fail;
    vault_keyprov def = {vault_key_default, NULL};
    if (!kp || !kp->fn)
        kp = &def;
    if (kp->fn(kp->arg, root, v->key, err, errlen) != VAULT_OK)
        goto fail;
    v->be = vault_gcm_backend_default();
    return v;
fail:
    vault_close(v);
    return NULL;
}

void vault_close(vault *v)
{
    if (!v)
        return;
    if (v->dfd >= 0)
        close(v->dfd);
    if (v->sfd >= 0)
        close(v->sfd);
    free(v->dir);
    free(v->sdir);
    base_memzero(v, sizeof *v);
    free(v);
}

/* ---- lock ---- */

/* Try once to lock the whole of fd for writing: an open-file-description
 * lock, or a classic one on a kernel without them. fcntl's result (errno
 * set on failure). */
static int lock_try(int fd)
{
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
#ifdef F_OFD_SETLK
    int r = fcntl(fd, F_OFD_SETLK, &fl);
    if (r != 0 && errno == EINVAL)   /* kernel without OFD locks */
        r = fcntl(fd, F_SETLK, &fl);
    return r;
#else
    return fcntl(fd, F_SETLK, &fl);
#endif
}

static int lock_take(vault *v, int *lfd, char *err, size_t errlen)
{
    int fd = openat(v->dfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return vault_seterr(err, errlen, VAULT_ELOCK, "%s/lock: %s", v->dir, strerror(errno));
    struct stat st;
    char shown[4200];
    snprintf(shown, sizeof shown, "%s/lock", v->dir);
    int rc = fstat(fd, &st) == 0 ? vault_check_mode(&st, shown, 0, err, errlen) : VAULT_EIO;
    if (rc) {
        close(fd);
        return rc == VAULT_EIO ? vault_seterr(err, errlen, rc, "%s: %s", shown, strerror(errno))
                               : rc;
    }
    int64_t t0 = base_now_ms();
    long sleep_us = 100;
    for (;;) {
        int r = lock_try(fd);
        if (r == 0)
            break;
        if (errno != EACCES && errno != EAGAIN && errno != EINTR) {
            close(fd);
            return vault_seterr(err, errlen, VAULT_ELOCK, "%s: cannot lock: %s", shown,
                                strerror(errno));
        }
        if (base_now_ms() - t0 > VAULT_LOCK_TIMEOUT_MS) {
            close(fd);
            return vault_seterr(err, errlen, VAULT_ELOCK,
                                "%s: still locked by another process after %d ms", shown,
                                VAULT_LOCK_TIMEOUT_MS);
        }
        struct timespec ts = {0, sleep_us * 1000};
        nanosleep(&ts, NULL);
        if (sleep_us < 5000)
            sleep_us *= 2;
    }
    *lfd = fd;
    return VAULT_OK;
}

static void lock_release(int lfd)
{
    close(lfd);   /* drops the lock */
}

/* ---- identity leases ---- */

int vault_identity_acquire(vault *v, const char *origin, const char *identity,
                           const char *holder, int *fd_out, char *err, size_t errlen)
{
    *fd_out = -1;
    if (!origin || !*origin || !identity)
        return vault_seterr(err, errlen, VAULT_EINVAL, "identity lease: no origin");
    if (mkdirat(v->dfd, "leases", 0700) != 0 && errno != EEXIST)
        return vault_seterr(err, errlen, VAULT_EIO, "%s/leases: %s", v->dir, strerror(errno));
    /* One file per (origin, identity): SHA-256 of both, NUL-separated. */
    vault_sha256_ctx c;
    vault_sha256_init(&c);
    vault_sha256_update(&c, origin, strlen(origin) + 1);
    vault_sha256_update(&c, identity, strlen(identity));
    uint8_t h[32];
    vault_sha256_final(&c, h);
    char name[80] = "leases/";
    vault_hex(h, 32, name + 7);
    int fd = openat(v->dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return vault_seterr(err, errlen, VAULT_EIO, "%s/%s: %s", v->dir, name, strerror(errno));
    /* Open-file-description locks also conflict inside one process, so two
     * agents of one process cannot share an identity either. */
    int r = lock_try(fd);
    if (r != 0) {
        int e = errno;
        char who[200] = "";
        ssize_t n = pread(fd, who, sizeof who - 1, 0);
        who[n > 0 ? n : 0] = 0;
        for (char *p = who; *p; p++)
            if ((unsigned char)*p < 0x20)
                *p = ' ';
        close(fd);
        if (e == EACCES || e == EAGAIN)
            return vault_seterr(err, errlen, VAULT_EBUSY, "identity \"%s\" for %s is in use "
                                "by %s", identity, origin, who[0] ? who : "another task");
        return vault_seterr(err, errlen, VAULT_EIO, "identity lease: %s", strerror(e));
    }
    if (ftruncate(fd, 0) == 0 && holder) {
        size_t hl = strlen(holder);
        if (pwrite(fd, holder, hl > 190 ? 190 : hl, 0) < 0) {
            /* the holder text is only for messages */
        }
    }
    *fd_out = fd;
    return VAULT_OK;
}

void vault_identity_release(int fd)
{
    if (fd >= 0)
        close(fd);  /* drops the lease; the kernel does it too if we die */
}

/* ---- files ---- */

/* One file of the store written all or nothing (base_file_put: the
 * temporary file is ".tmp.<final name>.<pid>.<random>", which sweep_tmp
 * removes when a writer died). */
static int write_atomic(vault *v, const char *name, const void *data, size_t len, char *err,
                        size_t errlen)
{
    int step;
    if (base_file_put(v->sfd, name, data, len, BASE_PUT_REPLACE, &step) == 0)
        return VAULT_OK;
    switch (step) {
    case BASE_PUT_ERANDOM:
        return vault_seterr(err, errlen, VAULT_ERANDOM, "no random bytes");
    case BASE_PUT_ECREATE:
        return vault_seterr(err, errlen, VAULT_EIO, "%s/%s: cannot create a temporary file: %s",
                            v->sdir, name, strerror(errno));
    case BASE_PUT_EWRITE:
        return vault_seterr(err, errlen, VAULT_EIO, "%s/%s: cannot write: %s", v->sdir, name,
                            strerror(errno));
    case BASE_PUT_EPLACE:
        return vault_seterr(err, errlen, VAULT_EIO, "%s/%s: cannot rename into place: %s",
                            v->sdir, name, strerror(errno));
    default:
        return vault_seterr(err, errlen, VAULT_EIO, "%s: fsync: %s", v->sdir, strerror(errno));
    }
}

/* Remove temporary files of writers that died (call with the lock held). */
static void sweep_tmp(vault *v)
{
    int fd = dup(v->sfd);
    if (fd < 0)
        return;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    rewinddir(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, ".tmp.", 5) == 0)
            unlinkat(v->sfd, e->d_name, 0);
    closedir(d);
}

/* Read sessions/name after checking it; *buf is new and NUL-terminated. */
static int read_checked(vault *v, const char *name, size_t max, uint8_t **buf, size_t *len,
                        char *err, size_t errlen)
{
    *buf = NULL;
    char shown[4400];
    snprintf(shown, sizeof shown, "%s/%s", v->sdir, name);
    int fd = openat(v->sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return vault_seterr(err, errlen, VAULT_ENOENT, "%s: no such file", shown);
        return vault_seterr(err, errlen, errno == ELOOP ? VAULT_EPERM : VAULT_EIO,
                            "%s: cannot open: %s", shown, strerror(errno));
    }
    struct stat st;
    int rc = fstat(fd, &st) == 0 ? vault_check_mode(&st, shown, 0, err, errlen)
                                 : vault_seterr(err, errlen, VAULT_EIO, "%s: %s", shown,
                                                strerror(errno));
    if (!rc && (uint64_t)st.st_size > max)
        rc = vault_seterr(err, errlen, VAULT_ETOOBIG, "%s: %lld bytes, over the %zu-byte limit",
                          shown, (long long)st.st_size, max);
    uint8_t *b = NULL;
    size_t n = 0, want = rc ? 0 : (size_t)st.st_size;
    if (!rc && !(b = malloc(want + 1)))
        rc = vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory reading %s", shown);
    while (!rc && n < want) {
        ssize_t r = read(fd, b + n, want - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            rc = vault_seterr(err, errlen, VAULT_EIO, "%s: read: %s", shown, strerror(errno));
        else if (r == 0)
            rc = vault_seterr(err, errlen, VAULT_ETRUNC, "%s: shrank while being read", shown);
        else
            n += (size_t)r;
    }
    close(fd);
    if (rc) {
        free(b);
        return rc;
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    return VAULT_OK;
}

static int check_origin(const char *origin, char *err, size_t errlen)
{
    if (!origin || !*origin)
        return vault_seterr(err, errlen, VAULT_EINVAL, "empty origin");
    size_t n = strlen(origin);
    if (n > VAULT_ORIGIN_MAX)
        return vault_seterr(err, errlen, VAULT_ETOOBIG, "origin longer than %u bytes",
                            VAULT_ORIGIN_MAX);
    if (!json_utf8_valid((const uint8_t *)origin, n))
        return vault_seterr(err, errlen, VAULT_EINVAL, "origin is not valid UTF-8");
    return VAULT_OK;
}

static void names_for(const char *origin, char enc[80], char js[80])
{
    char h[65];
    vault_origin_name(origin, h);
    snprintf(enc, 80, "%s.enc", h);
    snprintf(js, 80, "%s.json", h);
}

/* How reading and removing one origin's session start: the origin and the
 * store's directories checked, the file names in enc and js, the store
 * lock taken (*lfd: release it with lock_release). 0, or the error (no
 * lock held). */
static int origin_locked(vault *v, const char *origin, char enc[80], char js[80], int *lfd,
                         char *err, size_t errlen)
{
    int rc = check_origin(origin, err, errlen);
    if (rc || (rc = check_dirs(v, err, errlen)))
        return rc;
    names_for(origin, enc, js);
    return lock_take(v, lfd, err, errlen);
}

/* ---- operations ---- */

int vault_put(vault *v, const char *origin, const char *identity, const uint8_t *blob,
              size_t len, int64_t expiry, char *err, size_t errlen)
{
    return vault_put_at(v, origin, identity, blob, len, (int64_t)time(NULL), expiry, err,
                        errlen);
}

int vault_put_at(vault *v, const char *origin, const char *identity, const uint8_t *blob,
                 size_t len, int64_t captured, int64_t expiry, char *err, size_t errlen)
{
    int rc = check_origin(origin, err, errlen);
    if (rc)
        return rc;
    if (!identity)
        identity = "";
    size_t il = strlen(identity);
    if (il > VAULT_IDENTITY_MAX || len > VAULT_BLOB_MAX)
        return vault_seterr(err, errlen, VAULT_ETOOBIG, "%s over its limit (%u bytes)",
                            il > VAULT_IDENTITY_MAX ? "identity" : "session",
                            il > VAULT_IDENTITY_MAX ? VAULT_IDENTITY_MAX : VAULT_BLOB_MAX);
    if (!json_utf8_valid((const uint8_t *)identity, il))
        return vault_seterr(err, errlen, VAULT_EINVAL, "identity is not valid UTF-8");
    if ((!blob && len) || expiry < 0 || captured < 0)
        return vault_seterr(err, errlen, VAULT_EINVAL, "bad session arguments");
    if ((rc = check_dirs(v, err, errlen)))
        return rc;

    /* Everything is prepared before the first write, so a failure here
     * (memory, random) changes nothing on disk. */
    int64_t now = (int64_t)time(NULL);
    uint8_t *env = NULL, *sealed = NULL;
    size_t envlen = 0, sealedlen = 0, jlen = 0;
    char *json = NULL;
    rc = vault_env_build(identity, captured, expiry, blob, len, &env, &envlen);
    if (rc) {
        return vault_seterr(err, errlen, rc, "cannot build the session: %s",
                            vault_strerror(rc));
    }
    rc = vault_blob_seal(v->be, v->key, origin, env, envlen, &sealed, &sealedlen, err, errlen);
    base_memzero(env, envlen);
    free(env);
    if (rc)
        return rc;
    vault_meta m = {(char *)origin, (char *)identity, captured, now, expiry};
    rc = vault_meta_write(&m, &json, &jlen);
    if (rc) {
        free(sealed);
        return vault_seterr(err, errlen, rc, "cannot write the metadata: %s",
                            vault_strerror(rc));
    }
    char enc[80], js[80];
    names_for(origin, enc, js);
    int lfd;
    rc = lock_take(v, &lfd, err, errlen);
    if (!rc) {
        sweep_tmp(v);
        rc = write_atomic(v, enc, sealed, sealedlen, err, errlen);
        if (!rc)
            rc = write_atomic(v, js, json, jlen, err, errlen);
        lock_release(lfd);
    }
    free(sealed);
    free(json);
    return rc;
}

int vault_get(vault *v, const char *origin, uint8_t **blob, size_t *len, vault_meta *meta,
              char *err, size_t errlen)
{
    *blob = NULL;
    *len = 0;
    if (meta)
        memset(meta, 0, sizeof *meta);
    char enc[80], js[80];
    int lfd;
    int rc = origin_locked(v, origin, enc, js, &lfd, err, errlen);
    if (rc)
        return rc;
    uint8_t *file = NULL, *pt = NULL;
    size_t flen = 0, ptlen = 0;
    rc = read_checked(v, enc, VAULT_SESSION_FILE_MAX, &file, &flen, err, errlen);
    if (rc == VAULT_ENOENT)
        vault_seterr(err, errlen, rc, "no stored session for %s", origin);
    if (!rc)
        rc = vault_blob_open(v->be, v->key, origin, file, flen, &pt, &ptlen, err, errlen);
    free(file);
    vault_env e;
    if (!rc)
        rc = vault_env_parse(pt, ptlen, &e, err, errlen);
    int64_t now = (int64_t)time(NULL);
    if (!rc && e.expiry && now >= e.expiry)
        rc = vault_seterr(err, errlen, VAULT_EEXPIRED,
                          "the session for %s expired %lld seconds ago", origin,
                          (long long)(now - e.expiry));
    vault_meta m = {NULL, NULL, 0, now, 0};
    if (!rc) {
        m.origin = strdup(origin);
        m.identity = strndup(e.identity, e.identity_len);
        m.captured = e.captured;
        m.expiry = e.expiry;
        if (!m.origin || !m.identity)
            rc = vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory");
    }
    if (!rc) {
        /* Rewrite .json from the authenticated values (heals a listing left
         * stale by a crash between the two renames of a put). Best effort. */
        char *json = NULL;
        size_t jlen;
        if (vault_meta_write(&m, &json, &jlen) == VAULT_OK)
            write_atomic(v, js, json, jlen, NULL, 0);
        free(json);
    }
    lock_release(lfd);
    if (rc) {
        vault_meta_free(&m);
        if (pt) {
            base_memzero(pt, ptlen);
            free(pt);
        }
        return rc;
    }
    size_t off = (size_t)(e.blob - pt), n = e.blob_len;
    memmove(pt, pt + off, n);
    base_memzero(pt + n, ptlen - n);   /* the envelope header's old place */
    pt[n] = 0;
    *blob = pt;
    *len = n;
    if (meta)
        *meta = m;
    else
        vault_meta_free(&m);
    return VAULT_OK;
}

void vault_free_blob(uint8_t *blob, size_t len)
{
    if (!blob)
        return;
    base_memzero(blob, len);
    free(blob);
}

static int is_meta_name(const char *n)
{
    size_t l = strlen(n);
    if (l != 69 || strcmp(n + 64, ".json") != 0)
        return 0;
    for (size_t i = 0; i < 64; i++)
        if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
            return 0;
    return 1;
}

static int meta_cmp(const void *a, const void *b)
{
    return strcmp(((const vault_meta *)a)->origin, ((const vault_meta *)b)->origin);
}

int vault_list(vault *v, vault_meta **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    int rc = check_dirs(v, err, errlen);
    if (rc)
        return rc;
    int fd = dup(v->sfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return vault_seterr(err, errlen, VAULT_EIO, "%s: cannot list: %s", v->sdir,
                            strerror(errno));
    }
    rewinddir(d);
    vault_meta *list = NULL;
    size_t cnt = 0, cap = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        if (!is_meta_name(e->d_name))
            continue;
        uint8_t *buf;
        size_t len;
        rc = read_checked(v, e->d_name, VAULT_META_MAX, &buf, &len, err, errlen);
        if (rc == VAULT_ENOENT) {   /* removed since readdir */
            rc = VAULT_OK;
            continue;
        }
        if (rc)
            break;
        vault_meta m;
        char perr[200];
        rc = vault_meta_parse((const char *)buf, len, &m, perr, sizeof perr);
        free(buf);
        if (rc) {
            vault_seterr(err, errlen, rc, "%s/%s: %s", v->sdir, e->d_name, perr);
            break;
        }
        char h[65], enc[80];
        vault_origin_name(m.origin, h);
        if (memcmp(h, e->d_name, 64) != 0) {
            vault_meta_free(&m);
            rc = vault_seterr(err, errlen, VAULT_EORIGIN,
                              "%s/%s: names an origin whose hash is not the file name "
                              "(renamed?)", v->sdir, e->d_name);
            break;
        }
        struct stat st;
        snprintf(enc, sizeof enc, "%s.enc", h);
        if (fstatat(v->sfd, enc, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            vault_meta_free(&m);   /* metadata without a session: skipped */
            continue;
        }
        if (cnt == cap) {
            size_t nc = cap ? cap * 2 : 8;
            vault_meta *nl = realloc(list, nc * sizeof *nl);
            if (!nl) {
                vault_meta_free(&m);
                rc = vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory listing sessions");
                break;
            }
            list = nl;
            cap = nc;
        }
        list[cnt++] = m;
    }
    closedir(d);
    if (rc) {
        vault_list_free(list, cnt);
        return rc;
    }
    if (cnt)
        qsort(list, cnt, sizeof *list, meta_cmp);
    *out = list;
    *n = cnt;
    return VAULT_OK;
}

void vault_list_free(vault_meta *list, size_t n)
{
    for (size_t i = 0; list && i < n; i++)
        vault_meta_free(&list[i]);
    free(list);
}

int vault_rm(vault *v, const char *origin, char *err, size_t errlen)
{
    char enc[80], js[80];
    int lfd;
    int rc = origin_locked(v, origin, enc, js, &lfd, err, errlen);
    if (rc)
        return rc;
    int gone = 0;
    const char *names[2] = {enc, js};
    for (int i = 0; i < 2 && !rc; i++) {
        if (unlinkat(v->sfd, names[i], 0) == 0)
            gone++;
        else if (errno != ENOENT)
            rc = vault_seterr(err, errlen, VAULT_EIO, "%s/%s: cannot remove: %s", v->sdir,
                              names[i], strerror(errno));
    }
    if (!rc && fsync(v->sfd) != 0)
        rc = vault_seterr(err, errlen, VAULT_EIO, "%s: fsync: %s", v->sdir, strerror(errno));
    lock_release(lfd);
    if (!rc && !gone)
        rc = vault_seterr(err, errlen, VAULT_ENOENT, "no stored session for %s", origin);
    return rc;
}
