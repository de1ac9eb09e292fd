/*
 * base.h — the small helpers several modules need, in one copy: monotonic
 * time and deadlines, waiting on a file descriptor, the one write loop,
 * writing a file all or nothing, a growing text buffer and array, base64, random
 * bytes and a wipe that the compiler keeps.
 *
 * The bottom of the module map: base/ depends on libc and POSIX only, and
 * every other module may use it. It holds no state; nothing here allocates
 * except base_buf, which the caller owns (base_buf_free), and base_grow,
 * which grows the caller's array.
 *
 * Errors: the OS helpers return 0, or -1 with errno set, so each caller maps
 * the failure to its own module's error code and message.
 */
#ifndef CDPGATE_BASE_H
#define CDPGATE_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- time and waiting (io.c) ---- */

/* Deadlines are absolute CLOCK_MONOTONIC milliseconds; BASE_NO_DEADLINE
 * means wait as long as it takes. */
#define BASE_NO_DEADLINE ((int64_t)-1)

/* CLOCK_MONOTONIC in milliseconds, and in nanoseconds (for timings). */
int64_t base_now_ms(void);
int64_t base_now_ns(void);
/* The deadline timeout_ms from now; any negative timeout gives
 * BASE_NO_DEADLINE. */
int64_t base_deadline_in(int timeout_ms);
/* Wait for events (poll(2) flags) on fd until the deadline: 1 ready (also
 * on POLLHUP/POLLERR), 0 timed out, -1 with errno on a poll failure. EINTR
 * is retried. */
int base_wait_fd(int fd, short events, int64_t deadline);

/* ---- the write loop (io.c) ---- */

enum {
    BASE_WRITE_SOCKET = 1, /* send(2) with MSG_NOSIGNAL: a closed peer is EPIPE,
                              never SIGPIPE */
};

/* Write all of buf[0..len) to fd: short writes continue, EINTR is retried,
 * and on a non-blocking fd EAGAIN waits for POLLOUT until deadline (give
 * BASE_NO_DEADLINE on a blocking fd). Returns 0, or -1 with errno set:
 * ETIMEDOUT when the deadline passed, EIO when a write wrote nothing,
 * otherwise write's or poll's own errno. *done (NULL accepted) gets the
 * count written, on failure too. */
int base_write_all(int fd, const void *buf, size_t len, int64_t deadline, unsigned flags,
                   size_t *done);

/* ---- writing a file all or nothing (io.c) ---- */

/* How base_file_put puts the new file in place. */
enum {
    BASE_PUT_REPLACE = 0, /* rename(2): replaces what is there */
    BASE_PUT_NEW = 1,     /* link(2): fails with EEXIST when the name exists,
                             so nothing is clobbered */
};
/* The step of base_file_put that failed (*step). */
enum {
    BASE_PUT_ERANDOM = 1, /* no random bytes for the temporary name */
    BASE_PUT_ECREATE,     /* the temporary file could not be created */
    BASE_PUT_EWRITE,      /* fchmod, write, fsync or close of it failed */
    BASE_PUT_EPLACE,      /* rename or link to name failed: name untouched */
    BASE_PUT_ESYNC,       /* the fsync of the directory failed: the file is
                             in place, its name may not survive a crash */
};

/* Write data[0..len) to name (relative to the directory dirfd; AT_FDCWD:
 * the working directory), mode 0600, so that name is either untouched or
 * the whole new file: a temporary file ".tmp.<last part of name>.<pid>.
 * <12 random hex digits>" in name's directory (O_CREAT|O_EXCL|O_NOFOLLOW),
 * written and fsync'd, is renamed or linked to name (how), the temporary
 * name is removed on every path, then name's directory is fsync'd.
 * 0, or -1 with errno set and *step (NULL accepted) naming what failed. */
int base_file_put(int dirfd, const char *name, const void *data, size_t len, unsigned how,
                  int *step);

/* ---- growing text buffer (buf.c) ---- */

/* A NUL-terminated text that grows by doubling. Zero-initialise it
 * ({0}); s stays NULL until the first byte. An allocation failure sets oom
 * and every later append is a no-op, so a builder checks oom once at the
 * end. Caller-owned: base_buf_free, or base_buf_take to keep the text. */
typedef struct {
    char *s;
    size_t len, cap;
    bool oom;
} base_buf;

/* Room for extra more bytes (and the NUL): false (and oom) when it cannot. */
bool base_buf_reserve(base_buf *b, size_t extra);
void base_buf_put(base_buf *b, const char *s, size_t n);
void base_buf_puts(base_buf *b, const char *s);
void base_buf_putc(base_buf *b, char c);
/* printf-style append, whole however long. */
void base_buf_printf(base_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The same with a va_list (for a caller's own printf-style function). */
void base_buf_vprintf(base_buf *b, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 0)))
#endif
    ;
/* The text (new; the caller frees it; "" allocated when empty), or NULL
 * when oom or out of memory; the buffer is left empty either way. */
char *base_buf_take(base_buf *b, size_t *len);
/* Free the text and zero the buffer. NULL is a no-op. */
void base_buf_free(base_buf *b);
/* s with < > & " ' written as HTML character references (NULL: nothing). */
void base_buf_put_html(base_buf *b, const char *s);

/* A growing array: room for need elements of size bytes in arr (NULL at
 * first) whose capacity is *cap, doubling from first. Returns the array,
 * moved or not, with *cap updated, or NULL when out of memory or the size
 * would overflow (arr and *cap untouched then; the caller still owns arr).
 * The new room is not zeroed. */
void *base_grow(void *arr, size_t need, size_t *cap, size_t size, size_t first);
/* A malloc'd copy of s ("" for NULL), or NULL when out of memory. */
char *base_strdup(const char *s);

/* ---- bytes (bytes.c) ---- */

/* Encoded length for n input bytes (with padding), excluding the NUL. */
#define BASE_B64_ENCLEN(n) ((((n) + 2) / 3) * 4)
/* RFC 4648 base64, standard alphabet with padding; writes a NUL after. out
 * must hold BASE_B64_ENCLEN(len) + 1 bytes. Returns the length. */
size_t base_b64_encode(const uint8_t *in, size_t len, char *out);
/* Strict decode (standard alphabet, padding required, no whitespace, unused
 * bits zero). Returns the byte count, or -1 on invalid input or when cap is
 * too small. */
ssize_t base_b64_decode(const char *in, size_t len, uint8_t *out, size_t cap);

/* Fill buf from the OS CSPRNG (getrandom, else /dev/urandom). 0, or -1
 * with errno set. */
int base_random(void *buf, size_t len);

/* memset(p, 0, n) that the compiler cannot drop as a dead store (for
 * buffers that held secrets). NULL or n 0 is a no-op. */
void base_memzero(void *p, size_t n);

/* The value of the hex digit c (0-9, a-f, A-F), or -1 when c is none. */
int base_hex_value(int c);

/* Cut s back to whole UTF-8 characters: snprintf into a full buffer may
 * end inside one. Only a torn last sequence is removed. */
void base_utf8_trim(char *s);

/* s[0..n) lower-cased (ASCII) into low, cap bytes with its NUL; false when
 * it does not fit. */
bool base_lower_copy(char *low, size_t cap, const char *s, size_t n);

#endif
