/*
 * vault_int.h — shared by the files of `cdpgate vault` only: vault_cmd.c
 * (the commands) and vault_state.c (origins and session state format v1).
 */
#ifndef CDPGATE_CLI_VAULT_INT_H
#define CDPGATE_CLI_VAULT_INT_H

#include "json/json.h"
#include "vault/vault.h"

#include <stdbool.h>
#include <stddef.h>

/* limits */

#define PASS_MAX        1024u            /* passphrase bytes */
#define PASS_MIN_EXPORT 8u               /* shortest passphrase for a new export */
#define ORIGIN_CAP      (VAULT_ORIGIN_MAX + 1)
#define HOST_MAX        253u
#define PW_FILE_MAX     (32u << 20)      /* storageState bytes */
#define PW_DEPTH        6u
#define PW_COOKIES_MAX  20000u
#define PW_ORIGINS_MAX  1000u
#define LS_ITEMS_MAX    100000u          /* localStorage items of one origin */
#define COOKIE_NV_MAX   4096u            /* name + value bytes (Chromium's limit) */
#define COOKIE_PATH_MAX 1024u
#define EXPORT_FILE_MAX (VAULT_EXPORT_MAX + 4096u)
#define EXPORT_FORMAT   "cdpgate-session-export"

/* vault_cmd.c */
/* Fill err (of errlen bytes; may be NULL) from fmt and return -1. */
int cli_seterr(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* vault_state.c */
/* Is v a JSON string? A JSON boolean? */
bool cli_is_str(const json_val *v);
bool cli_is_bool(const json_val *v);
/* Check cookie object i of the stored format (pw: of a Playwright file,
 * whose partitionKey is a string). 0, or -1 with err naming the field,
 * never a value. */
int cli_cookie_check(const json_val *c, size_t i, bool pw, char *err, size_t errlen);
/* The canonical origin of url into out (see cli_vault_origin in cli/cli.h);
 * when not NULL, https tells the scheme and host receives the host. 0, or
 * -1 with a reason in err that never echoes a user name or password. */
int cli_origin_parse(const char *url, char *out, size_t cap, bool *https, char *host,
                     size_t hostcap, char *err, size_t errlen);
/* Validate a parsed session state v1; counts its cookies and localStorage
 * items when the pointers are not NULL. 0, or -1 with a reason in err. */
int cli_session_check_val(const json_val *root, size_t *ncookies, size_t *nitems,
                          char *err, size_t errlen);
/* Parse len bytes of session values (at most max, depth levels deep),
 * strictly (no duplicate keys) and as secret (zeroed when freed). */
json_doc *cli_parse_strict(const char *buf, size_t len, size_t max, unsigned depth,
                           json_err *je);

#endif
