/*
 * evidence_cmd.c — `cdpgate evidence verify DIR` (issue 16, point 3): does
 * an evidence folder hold the records that were written? Each record's
 * digest, the chain (prev, n), the files records name (screenshots,
 * reports) and manifest.json are checked (evidence/evidence.h). Prints
 * one line: "ok: N records, M files checked, final digest HEX", or what
 * failed and at which record; exit 0 when it verifies, 1 when it does
 * not, 2 on a bad command line.
 */
#include "cli/cli.h"
#include "evidence/evidence.h"

#include <stdio.h>
#include <string.h>

static const char EVIDENCE_USAGE[] =
"usage: cdpgate evidence verify DIR\n"
"\n"
"Check an evidence folder that --evidence wrote (docs/evidence.md): every\n"
"record's digest, the chain of records (a record edited, removed, added or\n"
"moved is found), the screenshots and reports the records name, and the\n"
"manifest's record count and final digest. Compare the final digest it\n"
"prints with the one cdpgate printed when the session ended.\n"
"Open DIR/index.html in a browser to step through the records.\n"
"\n"
"exit codes: 0 it verifies, 1 it does not, 2 bad command line.\n";

int cli_evidence(const cli_opts *o, int argc, char **argv)
{
    (void)o;
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
                      strcmp(argv[1], "help") == 0)) {
        fputs(EVIDENCE_USAGE, stdout);
        return EXIT_OK;
    }
    if (argc != 3 || strcmp(argv[1], "verify") != 0) {
        fputs(EVIDENCE_USAGE, stderr);
        return EXIT_USAGE;
    }
    evidence_report rep;
    evidence_err err = {0};
    int rc = evidence_verify(argv[2], &rep, &err);
    if (rc) {
        fprintf(stderr, "cdpgate evidence verify: %s: %s\n", argv[2], err.msg);
        printf("FAILED: %s\n", err.msg);
        return EXIT_FAIL;
    }
    printf("ok: %llu records, %llu files checked", (unsigned long long)rep.records,
           (unsigned long long)rep.files);
    if (rep.outside)
        printf(", %llu outside the folder not checked", (unsigned long long)rep.outside);
    printf(", final digest %s\n", rep.final_hex);
    return EXIT_OK;
}
