/*
 * probe_nocheck.c — a test program with one test case that makes no check,
 * for tests/checkrun.sh: the harness must count that case as failed and
 * the program must exit non-zero. Not a test_* program (run.sh does not
 * run it directly).
 */
#include "tests/harness.h"

static void t_checks_nothing(void) {}

static const test_case TESTS[] = {
    {"checks_nothing", t_checks_nothing},
    {0},
};

int main(int argc, char **argv) { return test_main(argc, argv, TESTS); }
