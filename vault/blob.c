/*
 * blob.c — the vault's file formats, I/O-free: the sealed session file
 * (.enc), the envelope inside it, the metadata file (.json) and the
 * passphrase-sealed export. Every reader takes a byte span, checks sizes
 * against the header before touching anything, and returns nothing on
 * failure. Layouts are in docs/vault.md and vault_int.h.
 *
 * Session file (all integers big-endian):
 *     0  magic "CDPGSESS"          8
 *     8  version (1)               1
 *     9  reserved, zero            3
 *    12  key id                    8   HMAC-SHA256(key, label)[0..8)
 *    20  SHA-256 of the origin    32
 *    52  ciphertext length         8
 *    60  nonce                    12   random
 *    72  ciphertext, then the 16-byte tag
 * AAD = bytes 0..72 followed by the origin itself, so the magic, version,
 * key id, length and origin are all authenticated; the clear key id and
 * origin hash only make the errors precise (another key, another origin).
 *
 * Export file: magic "CDPGEXPT", version, 3 zero bytes, iterations (4),
 * salt (16), ciphertext length (8), nonce (12), ciphertext, tag; the first
 * 52 bytes are the AAD.
 */
#include "vault/vault_int.h"
#include "json/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char KEYID_LABEL[] = "cdpgate vault key id v1";

void vault_key_id(const uint8_t key[32], uint8_t id[VAULT_KEYID_LEN])
{
    uint8_t mac[32];
    vault_hmac_sha256(key, 32, KEYID_LABEL, sizeof KEYID_LABEL - 1, mac);
    memcpy(id, mac, VAULT_KEYID_LEN);
    base_memzero(mac, sizeof mac);
}

static int check_magic(const uint8_t *buf, size_t len, const char *magic, size_t hdr,
                       const char *what, char *err, size_t errlen)
{
    if (len < 8 || memcmp(buf, magic, 8) != 0)
        return vault_seterr(err, errlen, VAULT_EFORMAT, "not a cdpgate %s (bad magic)", what);
    if (len < 12)
        return vault_seterr(err, errlen, VAULT_ETRUNC, "%s truncated: %zu bytes", what, len);
    if (buf[8] != VAULT_FORMAT_VERSION)
        return vault_seterr(err, errlen, VAULT_EVERSION,
                            "%s has format version %u; this build reads version %u", what,
                            buf[8], VAULT_FORMAT_VERSION);
    if (buf[9] | buf[10] | buf[11])
        return vault_seterr(err, errlen, VAULT_EFORMAT, "%s header: reserved bytes not zero",
                            what);
    if (len < hdr + VAULT_TAG_LEN)
        return vault_seterr(err, errlen, VAULT_ETRUNC,
                            "%s truncated: %zu bytes, shorter than its header", what, len);
    return VAULT_OK;
}

/* The ciphertext length field against the actual size. */
static int check_len(uint64_t ct_len, size_t len, size_t hdr, size_t max, const char *what,
                     char *err, size_t errlen)
{
    if (ct_len > max)
        return vault_seterr(err, errlen, VAULT_ETOOBIG,
                            "%s claims %llu bytes, over the %zu-byte limit", what,
                            (unsigned long long)ct_len, max);
    uint64_t want = (uint64_t)hdr + ct_len + VAULT_TAG_LEN;
    if (want != len)
        return vault_seterr(err, errlen, VAULT_ETRUNC,
                            "%s %s: %zu bytes where the header says %llu", what,
                            len < want ? "truncated" : "has trailing bytes", len,
                            (unsigned long long)want);
    return VAULT_OK;
}

int vault_blob_parse(const uint8_t *buf, size_t len, vault_blob_hdr *h, char *err,
                     size_t errlen)
{
    int rc = check_magic(buf, len, VAULT_MAGIC_SESSION, VAULT_SESSION_HDR, "session file",
                         err, errlen);
    if (rc)
        return rc;
    memcpy(h->key_id, buf + 12, VAULT_KEYID_LEN);
    memcpy(h->origin_hash, buf + 20, 32);
    h->ct_len = vault_be64(buf + 52);
    rc = check_len(h->ct_len, len, VAULT_SESSION_HDR, VAULT_SESSION_FILE_MAX, "session file",
                   err, errlen);
    if (rc)
        return rc;
    h->nonce = buf + 60;
    h->ct = buf + VAULT_SESSION_HDR;
    h->tag = h->ct + h->ct_len;
    return VAULT_OK;
}

static int gcm_to_vault(int rc)
{
    return rc == VAULT_GCM_EAUTH ? VAULT_EAUTH : VAULT_EIO;
}

int vault_blob_seal(const vault_gcm_backend *be, const uint8_t key[32], const char *origin,
                    const uint8_t *pt, size_t len, uint8_t **out, size_t *outlen,
                    char *err, size_t errlen)
{
    *out = NULL;
    size_t olen = strlen(origin);
    if (len > VAULT_SESSION_FILE_MAX)
        return vault_seterr(err, errlen, VAULT_ETOOBIG, "session too large (%zu bytes)", len);
    size_t total = VAULT_SESSION_HDR + len + VAULT_TAG_LEN;
    uint8_t *buf = malloc(total);
    if (!buf)
        return vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory sealing a session");
    memcpy(buf, VAULT_MAGIC_SESSION, 8);
    buf[8] = VAULT_FORMAT_VERSION;
    buf[9] = buf[10] = buf[11] = 0;
    vault_key_id(key, buf + 12);
    vault_sha256(origin, olen, buf + 20);
    vault_put_be64(buf + 52, len);
    if (base_random(buf + 60, VAULT_NONCE_LEN) != VAULT_OK) {
        free(buf);
        return vault_seterr(err, errlen, VAULT_ERANDOM, "no random bytes for the nonce");
    }
    vault_gcm_ctx c;
    int rc = vault_gcm_init(&c, be, key, 32);
    if (!rc)
        rc = vault_gcm_set_iv(&c, buf + 60, VAULT_NONCE_LEN);
    if (!rc)
        rc = vault_gcm_aad(&c, buf, VAULT_SESSION_HDR);
    if (!rc)
        rc = vault_gcm_aad(&c, (const uint8_t *)origin, olen);
    if (!rc)
        rc = vault_gcm_encrypt(&c, pt, buf + VAULT_SESSION_HDR, len);
    if (!rc)
        rc = vault_gcm_tag(&c, buf + VAULT_SESSION_HDR + len, VAULT_TAG_LEN);
    vault_gcm_wipe(&c);
    if (rc) {
        free(buf);
        return vault_seterr(err, errlen, VAULT_EIO, "AES-GCM failed: %s", vault_gcm_strerror(rc));
    }
    *out = buf;
    *outlen = total;
    return VAULT_OK;
}

int vault_blob_open(const vault_gcm_backend *be, const uint8_t key[32], const char *origin,
                    const uint8_t *buf, size_t len, uint8_t **pt, size_t *ptlen,
                    char *err, size_t errlen)
{
    *pt = NULL;
    vault_blob_hdr h;
    int rc = vault_blob_parse(buf, len, &h, err, errlen);
    if (rc)
        return rc;
    uint8_t id[VAULT_KEYID_LEN], oh[32];
    vault_key_id(key, id);
    size_t olen = strlen(origin);
    vault_sha256(origin, olen, oh);
    /* Neither comparison involves secret data (the id is a public function
     * of the key), but be uniform. */
    if (!vault_ct_equal(id, h.key_id, sizeof id))
        return vault_seterr(err, errlen, VAULT_EWRONGKEY,
                            "session file was sealed with a different vault key");
    if (!vault_ct_equal(oh, h.origin_hash, sizeof oh))
        return vault_seterr(err, errlen, VAULT_EORIGIN,
                            "session file belongs to another origin (renamed or copied)");
    uint8_t *out = malloc(h.ct_len + 1);
    if (!out)
        return vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory opening a session");
    vault_gcm_ctx c;
    rc = vault_gcm_init(&c, be, key, 32);
    if (!rc)
        rc = vault_gcm_set_iv(&c, h.nonce, VAULT_NONCE_LEN);
    if (!rc)
        rc = vault_gcm_aad(&c, buf, VAULT_SESSION_HDR);
    if (!rc)
        rc = vault_gcm_aad(&c, (const uint8_t *)origin, olen);
    if (!rc)
        rc = vault_gcm_auth(&c, h.ct, h.ct_len);
    if (!rc)
        rc = vault_gcm_check_tag(&c, h.tag, VAULT_TAG_LEN);
    if (!rc)
        rc = vault_gcm_decrypt(&c, h.ct, out, h.ct_len);
    vault_gcm_wipe(&c);
    if (rc) {
        free(out);   /* nothing was written to it unless the tag verified */
        if (rc == VAULT_GCM_EAUTH)
            return vault_seterr(err, errlen, VAULT_EAUTH,
                                "session file failed authentication (tampered or corrupt)");
        return vault_seterr(err, errlen, gcm_to_vault(rc), "AES-GCM failed: %s",
                            vault_gcm_strerror(rc));
    }
    out[h.ct_len] = 0;
    *pt = out;
    *ptlen = h.ct_len;
    return VAULT_OK;
}

/* ---- envelope ---- */

int vault_env_build(const char *identity, int64_t captured, int64_t expiry,
                    const uint8_t *blob, size_t len, uint8_t **out, size_t *outlen)
{
    size_t il = identity ? strlen(identity) : 0;
    *out = NULL;
    if (il > VAULT_IDENTITY_MAX || len > VAULT_BLOB_MAX)
        return VAULT_ETOOBIG;
    size_t total = VAULT_ENV_FIXED + il + len;
    uint8_t *b = malloc(total ? total : 1);
    if (!b)
        return VAULT_ENOMEM;
    vault_put_be32(b, (uint32_t)il);
    if (il)
        memcpy(b + 4, identity, il);
    vault_put_be64(b + 4 + il, (uint64_t)captured);
    vault_put_be64(b + 12 + il, (uint64_t)expiry);
    if (len)
        memcpy(b + VAULT_ENV_FIXED + il, blob, len);
    *out = b;
    *outlen = total;
    return VAULT_OK;
}

int vault_env_parse(const uint8_t *pt, size_t len, vault_env *e, char *err, size_t errlen)
{
    if (len < VAULT_ENV_FIXED)
        return vault_seterr(err, errlen, VAULT_EFORMAT, "session envelope too short");
    uint32_t il = vault_be32(pt);
    if (il > VAULT_IDENTITY_MAX || il > len - VAULT_ENV_FIXED)
        return vault_seterr(err, errlen, VAULT_EFORMAT, "session envelope: bad identity length");
    if (memchr(pt + 4, 0, il))
        return vault_seterr(err, errlen, VAULT_EFORMAT, "session envelope: NUL in identity");
    e->identity = (const char *)pt + 4;
    e->identity_len = il;
    e->captured = (int64_t)vault_be64(pt + 4 + il);
    e->expiry = (int64_t)vault_be64(pt + 12 + il);
    e->blob = pt + VAULT_ENV_FIXED + il;
    e->blob_len = len - VAULT_ENV_FIXED - il;
    if (e->blob_len > VAULT_BLOB_MAX)
        return vault_seterr(err, errlen, VAULT_ETOOBIG, "session envelope: blob too large");
    return VAULT_OK;
}

/* ---- metadata JSON ---- */

int vault_meta_write(const vault_meta *m, char **out, size_t *len)
{
    json_w w;
    json_w_init(&w);
    w.max = VAULT_META_MAX;
    json_w_obj_begin(&w);
    json_w_key(&w, "version");
    json_w_int(&w, VAULT_FORMAT_VERSION);
    json_w_key(&w, "origin");
    json_w_str(&w, m->origin);
    json_w_key(&w, "identity");
    json_w_str(&w, m->identity ? m->identity : "");
    json_w_key(&w, "captured");
    json_w_int(&w, m->captured);
    json_w_key(&w, "last_used");
    json_w_int(&w, m->last_used);
    json_w_key(&w, "expiry");
    json_w_int(&w, m->expiry);
    json_w_obj_end(&w);
    int e = json_w_error(&w);
    *out = json_w_take(&w, len);
    json_w_free(&w);
    if (e == JSON_OK && *out)
        return VAULT_OK;
    free(*out);
    *out = NULL;
    return e == JSON_ENOMEM || e == JSON_OK ? VAULT_ENOMEM
         : e == JSON_ESIZE ? VAULT_ETOOBIG : VAULT_EINVAL;
}

static int meta_str(const json_val *root, const char *key, size_t max, int required,
                    char **out, char *err, size_t errlen)
{
    const json_val *v = json_get(root, key);
    size_t n = 0;
    const char *s = json_str(v, &n);
    *out = NULL;
    if (!v && !required)
        s = "";
    if (!s)
        return vault_seterr(err, errlen, VAULT_EFORMAT, "metadata: \"%s\" missing or not a string",
                            key);
    if (n > max || (required && n == 0) || memchr(s, 0, n))
        return vault_seterr(err, errlen, VAULT_EFORMAT,
                            "metadata: \"%s\" empty, too long or holds NUL", key);
    *out = malloc(n + 1);
    if (!*out)
        return vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory reading metadata");
    memcpy(*out, s, n);
    (*out)[n] = 0;
    return VAULT_OK;
}

static int meta_int(const json_val *root, const char *key, int64_t *out, char *err,
                    size_t errlen)
{
    if (!json_int(json_get(root, key), out) || *out < 0)
        return vault_seterr(err, errlen, VAULT_EFORMAT,
                            "metadata: \"%s\" missing or not a non-negative integer", key);
    return VAULT_OK;
}

int vault_meta_parse(const char *buf, size_t len, vault_meta *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (len > VAULT_META_MAX)
        return vault_seterr(err, errlen, VAULT_ETOOBIG, "metadata file over %u bytes",
                            VAULT_META_MAX);
    json_opts o = {VAULT_META_MAX, 4, JSON_NO_DUPLICATES};
    json_err je;
    json_doc *d = json_parse(buf, len, &o, &je);
    if (!d) {
        if (je.code == JSON_ENOMEM)
            return vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory reading metadata");
        return vault_seterr(err, errlen, VAULT_EFORMAT,
                            "metadata is not valid JSON: %s at byte %zu",
                            je.msg ? je.msg : "error", je.offset);
    }
    const json_val *root = json_doc_root(d);
    int64_t version = 0;
    int rc = VAULT_OK;
    if (!json_is(root, JSON_OBJECT))
        rc = vault_seterr(err, errlen, VAULT_EFORMAT, "metadata is not a JSON object");
    else if (!json_int(json_get(root, "version"), &version) || version != VAULT_FORMAT_VERSION)
        rc = vault_seterr(err, errlen, VAULT_EVERSION, "metadata: unsupported \"version\"");
    if (!rc)
        rc = meta_str(root, "origin", VAULT_ORIGIN_MAX, 1, &m->origin, err, errlen);
    if (!rc)
        rc = meta_str(root, "identity", VAULT_IDENTITY_MAX, 0, &m->identity, err, errlen);
    if (!rc)
        rc = meta_int(root, "captured", &m->captured, err, errlen);
    if (!rc)
        rc = meta_int(root, "last_used", &m->last_used, err, errlen);
    if (!rc)
        rc = meta_int(root, "expiry", &m->expiry, err, errlen);
    json_doc_free(d);
    if (rc)
        vault_meta_free(m);
    return rc;
}

void vault_meta_free(vault_meta *m)
{
    if (!m)
        return;
    free(m->origin);
    free(m->identity);
    memset(m, 0, sizeof *m);
}

/* ---- passphrase export ---- */

int vault_export_parse(const uint8_t *buf, size_t len, vault_export_hdr *h, char *err,
                       size_t errlen)
{
    int rc = check_magic(buf, len, VAULT_MAGIC_EXPORT, VAULT_EXPORT_HDR, "export file", err,
                         errlen);
    if (rc)
        return rc;
    h->iterations = vault_be32(buf + 12);
    if (h->iterations < VAULT_PBKDF2_MIN_ITER || h->iterations > VAULT_PBKDF2_MAX_ITER)
        return vault_seterr(err, errlen, VAULT_EFORMAT,
                            "export file: PBKDF2 iteration count %u outside %u..%u",
                            h->iterations, VAULT_PBKDF2_MIN_ITER, VAULT_PBKDF2_MAX_ITER);
    h->salt = buf + 16;
    h->ct_len = vault_be64(buf + 32);
    rc = check_len(h->ct_len, len, VAULT_EXPORT_HDR, VAULT_EXPORT_MAX, "export file", err,
                   errlen);
    if (rc)
        return rc;
    h->nonce = buf + 40;
    h->ct = buf + VAULT_EXPORT_HDR;
    h->tag = h->ct + h->ct_len;
    return VAULT_OK;
}

static const char PASS_LABEL[] = "cdpgate export v1";

/* PBKDF2 salt input: a fixed label, then the random salt (so the derived
 * key is bound to this format). */
static int derive(const char *pass, size_t passlen, const uint8_t *salt, uint32_t iter,
                  uint8_t key[32])
{
    uint8_t s[sizeof PASS_LABEL - 1 + VAULT_SALT_LEN];
    memcpy(s, PASS_LABEL, sizeof PASS_LABEL - 1);
    memcpy(s + sizeof PASS_LABEL - 1, salt, VAULT_SALT_LEN);
    return vault_pbkdf2_sha256(pass, passlen, s, sizeof s, iter, key, 32);
}

int vault_seal_passphrase(const char *pass, size_t passlen, const uint8_t *pt, size_t len,
                          uint32_t iterations, uint8_t **out, size_t *outlen,
                          char *err, size_t errlen)
{
    *out = NULL;
    if (!iterations)
        iterations = VAULT_PBKDF2_ITERATIONS;
    if (iterations < VAULT_PBKDF2_MIN_ITER || iterations > VAULT_PBKDF2_MAX_ITER)
        return vault_seterr(err, errlen, VAULT_EINVAL, "PBKDF2 iteration count %u outside %u..%u",
                            iterations, VAULT_PBKDF2_MIN_ITER, VAULT_PBKDF2_MAX_ITER);
    if (!passlen)
        return vault_seterr(err, errlen, VAULT_EINVAL, "empty passphrase");
    if (len > VAULT_EXPORT_MAX)
        return vault_seterr(err, errlen, VAULT_ETOOBIG, "export over %u bytes", VAULT_EXPORT_MAX);
    size_t total = VAULT_EXPORT_HDR + len + VAULT_TAG_LEN;
    uint8_t *buf = malloc(total);
    if (!buf)
        return vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory sealing an export");
    memcpy(buf, VAULT_MAGIC_EXPORT, 8);
    buf[8] = VAULT_FORMAT_VERSION;
    buf[9] = buf[10] = buf[11] = 0;
    vault_put_be32(buf + 12, iterations);
    vault_put_be64(buf + 32, len);
    if (base_random(buf + 16, VAULT_SALT_LEN) || base_random(buf + 40, VAULT_NONCE_LEN)) {
        free(buf);
        return vault_seterr(err, errlen, VAULT_ERANDOM, "no random bytes for salt and nonce");
    }
    uint8_t key[32];
    int rc = derive(pass, passlen, buf + 16, iterations, key);
    if (!rc)
        rc = vault_gcm_seal(NULL, key, 32, buf + 40, VAULT_NONCE_LEN, buf, VAULT_EXPORT_HDR, pt,
                            len, buf + VAULT_EXPORT_HDR, buf + VAULT_EXPORT_HDR + len,
                            VAULT_TAG_LEN);
    base_memzero(key, sizeof key);
    if (rc) {
        free(buf);
        return vault_seterr(err, errlen, VAULT_EIO, "sealing the export failed");
    }
    *out = buf;
    *outlen = total;
    return VAULT_OK;
}

int vault_open_passphrase(const char *pass, size_t passlen, const uint8_t *in, size_t inlen,
                          uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    *out = NULL;
    vault_export_hdr h;
    int rc = vault_export_parse(in, inlen, &h, err, errlen);
    if (rc)
        return rc;
    uint8_t *pt = malloc(h.ct_len + 1);
    if (!pt)
        return vault_seterr(err, errlen, VAULT_ENOMEM, "out of memory opening an export");
    uint8_t key[32];
    rc = derive(pass, passlen, h.salt, h.iterations, key);
    if (!rc)
        rc = vault_gcm_open(NULL, key, 32, h.nonce, VAULT_NONCE_LEN, in, VAULT_EXPORT_HDR, h.ct,
                      h.ct_len, h.tag, VAULT_TAG_LEN, pt);
    base_memzero(key, sizeof key);
    if (rc) {
        free(pt);
        if (rc == VAULT_GCM_EAUTH)
            return vault_seterr(err, errlen, VAULT_EAUTH,
                                "export failed authentication: wrong passphrase or tampered file");
        return vault_seterr(err, errlen, VAULT_EIO, "opening the export failed");
    }
    pt[h.ct_len] = 0;
    *out = pt;
    *outlen = h.ct_len;
    return VAULT_OK;
}
