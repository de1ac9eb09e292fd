/*
 * key.c — the trail key (session 21): a per-user secret of 32 random bytes
 * that a target's hidden identifiers are hashed under (HMAC-SHA-256), so a
 * trail shared without it gives no identifier of little entropy back. The
 * key is a file of its own next to the vault's (vault_key_file: 0600,
 * made O_EXCL, this user's), never written into a trail, a message or an
 * output: a trail keeps its id.
 */
#include "replay/replay_int.h"

#include "vault/vault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the key's id is the HMAC of: starts with a NUL byte, which no word
 * of page text holds, so no identifier's hash is the key's id. */
static const char KEY_ID_LABEL[] = "\0cdpgate trail key id v1";

static void hex_of(const unsigned char *d, size_t nbytes, char *out)
{
    static const char HEX[] = "0123456789abcdef";
    for (size_t i = 0; i < nbytes; i++) {
        out[2 * i] = HEX[d[i] >> 4];
        out[2 * i + 1] = HEX[d[i] & 15];
    }
    out[2 * nbytes] = '\0';
}

void replay_key_set(replay_key *k, const unsigned char raw[REPLAY_KEY_LEN])
{
    uint8_t d[VAULT_SHA256_LEN];
    memcpy(k->k, raw, REPLAY_KEY_LEN);
    vault_hmac_sha256(k->k, REPLAY_KEY_LEN, KEY_ID_LABEL, sizeof KEY_ID_LABEL - 1, d);
    hex_of(d, REPLAY_KEY_ID_HEX / 2, k->id);
    base_memzero(d, sizeof d);
}

void replay_key_wipe(replay_key *k)
{
    if (k)
        base_memzero(k, sizeof *k);
}

int replay_key_load(const char *file, bool create, replay_key *k, replay_err *err)
{
    if (!k)
        return replay_fail(err, REPLAY_EARG, 0, "no trail key to fill");
    replay_key_wipe(k);
    const char *env = getenv("CDPGATE_TRAIL_KEY");
    if (!file && env && *env)
        file = env;
    uint8_t raw[REPLAY_KEY_LEN];
    char why[300] = "";
    int rc = vault_key_file(file, "trail-key", create, raw, why, sizeof why);
    if (rc != VAULT_OK) {
        base_memzero(raw, sizeof raw);
        return replay_fail(err, rc == VAULT_ENOMEM ? REPLAY_ENOMEM : REPLAY_EIO, 0,
                           "%s: %s", rc == VAULT_ENOENT ? "no trail key" : "the trail key",
                           why);
    }
    replay_key_set(k, raw);
    base_memzero(raw, sizeof raw);
    return REPLAY_OK;
}

void replay_id_hmac(const replay_key *key, const char *w, size_t n, char id[REPLAY_ID_HEX + 1])
{
    uint8_t d[VAULT_SHA256_LEN];
    vault_hmac_sha256(key->k, REPLAY_KEY_LEN, w, n, d);
    hex_of(d, REPLAY_ID_HEX / 2, id);
}
