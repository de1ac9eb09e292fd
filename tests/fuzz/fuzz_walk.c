/*
 * fuzz_walk.c — libFuzzer target for the walker output reader
 * (snapshot/observe_walk.c snap_obs_walk_read; also replayed over the
 * checked-in corpus by tests/fuzz/replay.c in `make test`).
 *
 * The input is the walker's string as the page's isolated world returned
 * it (page-influenced), read whole and then again in pieces (the
 * incremental reader, as snap_obs_walk_fetch feeds it), with the same
 * answer. The reader either refuses it with a message or
 * fills records that the AX side's accessors read back within bounds:
 * every child index is a record, every role is interned, and every record
 * of a frame is freed again.
 */
#include "snapshot/observe_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    frame_st F;
    memset(&F, 0, sizeof F);
    char err[160] = "";
    int64_t mut = 0;
    bool unsure = false;
    int rc = snap_obs_walk_read(&F, (const char *)data, size, &mut, &unsure, err, sizeof err);
    if (rc) {
        CHECK(rc == SNAP_ENOMEM || strncmp(err, "walker output, line ", 20) == 0);
    } else {
        CHECK(F.nnodes > 0);
        CHECK(strcmp(snap_obs_ax_role(&F, snap_obs_ax_at(&F, 0)), "RootWebArea") == 0);
        for (size_t i = 0; i < F.nnodes; i++) {
            const axn *n = snap_obs_ax_at(&F, i);
            CHECK(n->role < F.nroles);
            size_t k0 = n->kid0, nk = snap_obs_ax_nkids(&F, i);
            for (size_t c = 0; c < nk; c++)
                CHECK(F.kix[k0 + c] > (int32_t)i && (size_t)F.kix[k0 + c] < F.nnodes);
            const char *nm = snap_obs_ax_name(&F, n);
            CHECK(!nm || strlen(nm) < size);
        }
    }
    /* The incremental reader, fed the same input in pieces (of a size the
     * input picks): the same answer as whole. */
    frame_st P;
    memset(&P, 0, sizeof P);
    char perr[160] = "";
    int64_t pmut = 0;
    bool punsure = false;
    size_t piece = size ? 1 + data[size - 1] % 64 : 1;
    int prc = snap_obs_walk_read_split(&P, (const char *)data, size, piece, &pmut, &punsure,
                                       perr, sizeof perr);
    /* Refused the same, though not always with the same message: input
     * with several faults may show another first when read piece by piece
     * (a bad record before a NUL byte in a later piece). */
    CHECK(prc == rc && (!rc || prc == SNAP_ENOMEM ||
                        strncmp(perr, "walker output, line ", 20) == 0));
    if (!rc)
        CHECK(pmut == mut && punsure == unsure && P.nnodes == F.nnodes && P.nkid == F.nkid &&
              memcmp(P.kix, F.kix, F.nkid * sizeof *F.kix) == 0);
    snap_obs_ax_drop(&P);
    snap_obs_ax_drop(&F);
    return 0;
}
