/*
 * probe_nocheck.c — planted faults of the harness for tests/checkrun.sh:
 * a test case that makes no check, and one whose checks pass but that
 * prints a failure's detail (`if (bad) test_fail_detail(...)`). The
 * harness must count each as failed and the program must exit non-zero
 * (checkrun copies it under two names, one case each). Not a test_*
 * program (run.sh does not run it directly).
 */
#include "tests/harness.h"

#include <string.h>

static void t_checks_nothing(void) {}

static void t_detail_only(void)
{
    CHECK(1);
    test_fail_detail("the PNGs differ");
}

static const test_case TESTS[] = {
    {"checks_nothing", t_checks_nothing},
    {"detail_only", t_detail_only},
    {0},
};

/* checkrun.sh copies this program as test_nocheck and test_detail: with
 * no argument, each runs its own case (the one its name says). */
int main(int argc, char **argv)
{
    static char nocheck[] = "checks_nothing", detail[] = "detail_only";
    const char *p = strrchr(argv[0], '/');
    char *own[] = {argv[0], strstr(p ? p + 1 : argv[0], "detail") ? detail : nocheck, NULL};
    return argc > 1 ? test_main(argc, argv, TESTS) : test_main(2, own, TESTS);
}
