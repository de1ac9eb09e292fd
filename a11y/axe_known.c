/*
 * axe_known.c — the published axe-core releases a file found by the search
 * may be (red team s16, R6-7; docs/a11y.md "Which axe-core runs"): the
 * SHA-256 of axe.min.js in each npm release from 4.3.0 (the first with
 * axe.runPartial, which the scan needs) to the newest when this list was
 * made. Each digest is of the file in the release's npm tarball (`npm pack
 * axe-core@X`, then sha256sum package/axe.min.js), the same as the
 * axe.min.js entry of the sri-history.json axe-core ships. A newer release
 * is not on the list until cdpgate adds it: until then the host names it
 * with --axe or CDPGATE_AXE (accepted, its digest said).
 */
#include "a11y/a11y.h"

#include <string.h>

static const struct {
    const char *version;
    const char *sha256;         /* lower-case hex */
} KNOWN[] = {
    {"4.3.0",
     "cc6e6a9770a359ac12bccb9518923d0bc3af5d1e4c6405cad48841b7cde9b2b0"},
    {"4.3.1",
     "409b48e56fd7df9037ab0dfdb8d13f1e8e227a2ddaad42f8ceb5a2965c2fda80"},
    {"4.3.2",
     "78658959a75704ea162f01815e6b5bae9a9c95a23132821154837d989e7f89dc"},
    {"4.3.3",
     "2aa28da7d7401e2f10578059bff941dbc649b7744eb0df18eef5516f17b0489f"},
    {"4.3.4",
     "430d44918fd284eb74f2f67bb595d2b24648ddb43a1c6c3db7d17a46ad39300a"},
    {"4.3.5",
     "3d565fc802a070e5b0cbbb66074d47ec156328b8ed156e503bde00217c5691cc"},
    {"4.4.0",
     "d3ecd04f8ed90e5c3b063c650c29450b1dbf340d177119a95d29f7dc82ffb9ae"},
    {"4.4.1",
     "8466af7fff96c20227760135ab82e3c2d4a5c8726311d910ab58a295451a7c2f"},
    {"4.4.2",
     "2cf9cf0221a5a25db5067ee9abdc8cd53902bf3b57dfba69e7d52161e4b04a13"},
    {"4.4.3",
     "697ea6c7edff0fe289b7bbecf1ff7b9015249bc834b409a348cd060df80aeba0"},
    {"4.5.0",
     "71d1ba1f517d912892229c968231985e46d5de671f73afd2bc4ed96eada49bf0"},
    {"4.5.1",
     "3acb77069f729a4d0509914bf69394da0fe987cbb4e86b950a6f20a3a5be4c7c"},
    {"4.5.2",
     "e09c39ac254be7b2ab4583dfaf1f400bcedfdedc70588a604cce67fcb6d23d34"},
    {"4.6.0",
     "d788f0c94abd3d22e15139de7b645468a9b58b9cfdddf5448544e03c22f318ed"},
    {"4.6.1",
     "f02575c8947b6414bf8fc1e451fd4ec0e1226fe5941fe428bd283cc4e87d3152"},
    {"4.6.2",
     "512f8c5b13c2eebf9a17329f48297e79f7ebccdd10a33e2d4b6c31948a66b023"},
    {"4.6.3",
     "bce86593db20af2ae95193afebcd356bdb9886e1ba67f3412663896f46804104"},
    {"4.7.0",
     "ab962f1efe6968896b5b2cace712836fbf57b665d8a6200715565c83ad5089c9"},
    {"4.7.1",
     "45e0d50694d89c308e8d80b77937e10b0b16b40725793b6ea1e9155bc7a8537f"},
    {"4.7.2",
     "55359a5f8c84eb9fe87e7c9ea21c0c2cb2af535184603a163826ca95ca8532cf"},
    {"4.8.0",
     "d6866209f5a752ddabc2a2d6ce9928c6570468e1f9dff4056247b48e8f8a79c0"},
    {"4.8.1",
     "1241324b0440b824258ce616276f57429e2cf3428f3e5b262b016d2859fa56bd"},
    {"4.8.2",
     "3bd534e7939c7f1c8a57ad60dd09fb37d9afa49361b744423dc170f908d64c6e"},
    {"4.8.3",
     "fe672df88ff84899d9df409efa3f53ee597dccfc336c956b8dd2a96ca20ff8d0"},
    {"4.8.4",
     "1d7975184c74f8bc15076edf2e6c207570a67933366de570c05a2c5af1732e6a"},
    {"4.9.0",
     "95e601b2de58ddd967719d98541a5ee6cfff061acc0bb5db2bdca15020323cd0"},
    {"4.9.1",
     "182a40dc5d8207e626c09861ad65027d45e85e3a56d01045d068e2e88ee432ea"},
    {"4.10.0",
     "483a4fed4b2fe56cfd94a58565020c863983f8415e2827f3481dce35e70effb5"},
    {"4.10.1",
     "3815dfdf753d9fea828f4988f4c2e4895c82d670b369b0e79a8a63caebf5819e"},
    {"4.10.2",
     "b511cd9dec01c76f4b2ad1723b66b6db37d4c2eb4ed199076e1829d9ee7b75e3"},
    {"4.10.3",
     "880970c081707360e64f34cea25ff91892f5bc95675b0776925b9709dd8a68bb"},
    {"4.11.0",
     "e9e5863c33a874f09bc01acd9234b7e3c871479f5eef8802fa582544465e6d01"},
    {"4.11.1",
     "7dbfabdfc6062936d79c873ddbb5f811a1219fca3928bd8cc9dd81f1e65f4720"},
    {"4.11.2",
     "75a700788807cdd9299675e50bae9f627a9f9f368e9296fea717f7123adecb1a"},
    {"4.11.3",
     "056547ef045ff50ede49a54c99a356890ff8940c5416a54a9c910086c54533dd"},
    {"4.11.4",
     "fb83a4378d978ecb7d2dae48a3a3778a84c971ac692f3afd45d714fba89c0f0d"},
    {"4.12.0",
     "a0afc408abecbe06ff7675033e7ea2c4046618162167aaa4ce1030b10963dece"},
    {"4.12.1",
     "66a8aaa95a8b044a7fd74a5435873bf04ff65a1ca75567c921b7509742085a14"},
    {"4.13.0",
     "c24f097bd2f451d4f933e8bc7d8d539f8672a2ebcb5cc9f9f3eec8ca9470a0c1"},
    {"4.14.0",
     "20c09fe157a8a34a30e241aaa1fcdade657734f08ab379ecfbeb7d45cc46e878"},
    {"4.14.1",
     "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"},
};

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Whether hex (64 digits) spells d. */
static bool same(const char *hex, const unsigned char d[32])
{
    for (size_t i = 0; i < 32; i++)
        if (hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1]) != d[i])
            return false;
    return true;
}

const char *a11y_axe_release(const unsigned char digest[32])
{
    for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++)
        if (strlen(KNOWN[i].sha256) == 64 && same(KNOWN[i].sha256, digest))
            return KNOWN[i].version;
    return NULL;
}
