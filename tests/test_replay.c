/*
 * test_replay.c — the trail (replay/): parsing untrusted lines with errors
 * naming the line, round trips through the serializer, healed steps kept
 * as revisions, the needs the steps imply, a torn last line dropped with a
 * warning, and the file written all or nothing with mode 0600.
 */
#include "harness.h"
#include "testlib.h"

#include "replay/replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define HDR "{\"cdpgate_trail\":1,\"created\":\"2026-12-03T06:30:00Z\",\"cdpgate\":\"0.1.0\"}\n"

static replay_trail *parse(const char *s, replay_err *err)
{
    return replay_trail_parse(s, strlen(s), err);
}

/* A trail with every field of a step, parsed; the fields read back. */
static void t_parse_full(void)
{
    const char *s =
        "{\"cdpgate_trail\":1,\"created\":\"2026-12-03T06:30:00Z\",\"cdpgate\":\"0.1.0\","
        "\"task\":\"price watch\",\"needs\":{\"origins\":[\"https://shop.test\"],"
        "\"identities\":{\"https://shop.test\":\"alice\"},\"tools\":[\"open\"],"
        "\"egress\":[],\"consequential\":[{\"origin\":\"https://shop.test\","
        "\"tool\":\"click\",\"name\":\"Buy\",\"row\":\"Lamp\"}]}}\n"
        "{\"step\":1,\"rev\":1,\"op\":\"open\",\"args\":{\"url\":\"https://shop.test/\"},"
        "\"class\":\"read\",\"state\":{\"origin\":\"https://shop.test\",\"url\":"
        "\"https://shop.test/\",\"title\":\"Shop\",\"authenticated\":true,"
        "\"identity\":\"alice\"},\"effect\":{\"navigated\":\"https://shop.test/\"}}\n"
        "\n"
        "{\"step\":2,\"op\":\"type\",\"args\":{\"text\":\"{{query}}\"},\"class\":\"interact\","
        "\"target\":{\"role\":\"searchbox\",\"name\":\"Search\",\"index\":2,"
        "\"frames\":[\"https://shop.test\"],\"id\":\"q\",\"name_attr\":\"q\","
        "\"label\":\"Search\",\"placeholder\":\"Find\",\"testid\":\"search\","
        "\"row\":\"r\",\"section\":\"Header\"},"
        "\"effect\":{\"appeared\":[\"3 results\"],\"value\":\"{{query}}\"}}\n"
        "{\"step\":3,\"op\":\"type\",\"secret\":true,\"note\":\"secret field, value not"
        " recorded\",\"target\":{\"role\":\"textbox\",\"name\":\"Password\"}}\n"
        "{\"step\":4,\"op\":\"read\",\"args\":{\"query\":\"Price\"},\"output\":\"price\","
        "\"effect\":{\"value\":\"$12\"}}\n";
    replay_err err;
    replay_trail *t = parse(s, &err);
    if (!CHECK(t)) {
        test_fail_detail("%s", err.msg);
        return;
    }
    CHECK_STR("price watch", t->h.task);
    CHECK_INT(4, t->nsteps);
    CHECK_INT(1, t->h.nidentities);
    CHECK_STR("alice", t->h.identities[0].label);
    CHECK_INT(1, t->h.nconsequential);
    CHECK_STR("Lamp", t->h.consequential[0].row);
    const replay_step *a = &t->steps[0], *b = &t->steps[1];
    CHECK_STR("open", a->op);
    CHECK_INT(1, a->rev);
    CHECK(a->state.authenticated);
    CHECK_STR("https://shop.test/", a->effect.navigated);
    CHECK_STR("{\"text\":\"{{query}}\"}", b->args);
    CHECK(b->has_target);
    CHECK_INT(2, b->target.index);
    CHECK_INT(1, b->target.frames.n);
    CHECK_STR("search", b->target.testid);
    CHECK_STR("3 results", b->effect.appeared.v[0]);
    CHECK(t->steps[2].secret);
    CHECK_STR("{}", t->steps[2].args);
    CHECK_STR("price", t->steps[3].output);
    /* The steps' needs are folded into the header: "read" needs "text". */
    bool text = false, typ = false;
    for (size_t i = 0; i < t->h.tools.n; i++) {
        text |= strcmp(t->h.tools.v[i], "text") == 0;
        typ |= strcmp(t->h.tools.v[i], "type") == 0;
    }
    CHECK(text && typ);
    CHECK_STR("", t->warning);
    replay_trail_free(t);
}

/* Each bad line is refused with its line number and the reason. */
static void t_parse_errors(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "trail: empty"},
        {"\n\n", "trail: empty"},
        {"{\"cdpgate_trail\":2,\"created\":\"x\",\"cdpgate\":\"y\"}\n",
         "trail line 1: header: format version"},
        {"{\"created\":\"x\"}\n", "trail line 1: header: not a trail header"},
        {"{\"cdpgate_trail\":1,\"cdpgate\":\"y\"}\n", "trail line 1: header: missing"},
        {"{\"cdpgate_trail\":1,\"created\":\"x\",\"cdpgate\":\"y\",\"zap\":1}\n",
         "trail line 1: header: unknown field \"zap\""},
        {HDR "{\"step\":1,\"op\":\"click\",\"bogus\":true}\n",
         "trail line 2: step: unknown field \"bogus\""},
        {HDR "{\"step\":1,\"op\":\"click\",\"op\":\"type\"}\n", "trail line 2: not JSON"},
        {HDR "{\"op\":\"click\"}\n", "trail line 2: step: missing \"step\""},
        {HDR "{\"step\":0,\"op\":\"click\"}\n", "trail line 2: step: \"step\" and"},
        {HDR "{\"step\":1,\"op\":5}\n", "trail line 2: step.op: not a string"},
        {HDR "{\"step\":1,\"op\":\"\"}\n", "trail line 2: step: empty \"op\""},
        {HDR "{\"step\":1,\"op\":\"click\",\"args\":[]}\n",
         "trail line 2: step.args: not an object"},
        {HDR "{\"step\":1,\"op\":\"a\\u0000b\"}\n", "trail line 2: step.op: holds a NUL"},
        {HDR "{\"step\":2,\"op\":\"a\"}\n{\"step\":1,\"op\":\"a\"}\n",
         "trail line 3: step: step numbers go down"},
        {HDR "{\"step\":1,\"op\":\"a\"}\n{\"step\":1,\"op\":\"a\"}\n",
         "trail line 3: step: a revision"},
        {HDR "{\"step\":1,\"op\":\"a\",\"target\":{\"index\":-1}}\n",
         "trail line 2: target.index: not an integer"},
        {HDR "{\"step\":1,\"op\":\"a\",\"target\":{\"x\":1}}\n",
         "trail line 2: target: unknown field"},
        {HDR "{\"step\":1,\"op\":\"a\",\"state\":{\"authenticated\":1}}\n",
         "trail line 2: state.authenticated: not true or false"},
        {HDR "{\"step\":1,\"op\":\"a\",\"effect\":{\"appeared\":[1]}}\n",
         "trail line 2: effect.appeared: an entry is not a string"},
        {HDR "not json\n{\"step\":1,\"op\":\"a\"}\n", "trail line 2: not JSON"},
        {"{\"cdpgate_trail\":1,\"created\":\"x\",\"cdpgate\":\"y\",\"needs\":"
         "{\"identities\":{\"https://a.test\":3}}}\n",
         "trail line 1: needs.identities.https://a.test: not a label"},
        {"{\"cdpgate_trail\":1,\"created\":\"x\",\"cdpgate\":\"y\",\"needs\":"
         "{\"consequential\":[{\"origin\":\"o\",\"tool\":\"click\"}]}}\n",
         "trail line 1: needs.consequential[]: missing \"name\""},
        {"[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]\n", "trail line 1: not JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        replay_err err;
        replay_trail *t = parse(cases[i].text, &err);
        if (!CHECK(t == NULL)) {
            test_fail_detail("case %zu parsed", i);
            replay_trail_free(t);
            continue;
        }
        if (!CHECK(strncmp(err.msg, cases[i].want, strlen(cases[i].want)) == 0))
            test_fail_detail("case %zu: want \"%s...\", got \"%s\"", i, cases[i].want,
                             err.msg);
        CHECK(err.code < 0);
    }
}

/* Limits: a string over REPLAY_MAX_STR, a list over REPLAY_MAX_LIST, a line
 * over REPLAY_MAX_LINE. */
static void t_parse_limits(void)
{
    size_t big = REPLAY_MAX_LINE + 100;
    char *s = malloc(big + 200);
    if (!CHECK(s))
        return;
    int n = snprintf(s, 200, HDR "{\"step\":1,\"op\":\"");
    memset(s + n, 'a', REPLAY_MAX_STR + 1);
    snprintf(s + n + REPLAY_MAX_STR + 1, 20, "\"}\n");
    replay_err err;
    replay_trail *t = parse(s, &err);
    CHECK(!t);
    CHECK(strstr(err.msg, "trail line 2: step.op: longer than the limit") != NULL);
    CHECK_INT(REPLAY_ELIMIT, err.code);

    n = snprintf(s, 200, HDR "{\"step\":1,\"op\":\"x\",\"egress\":[");
    size_t pos = (size_t)n;
    for (unsigned i = 0; i <= REPLAY_MAX_LIST; i++)
        pos += (size_t)snprintf(s + pos, 8, "%s\"e\"", i ? "," : "");
    snprintf(s + pos, 20, "]}\n");
    t = parse(s, &err);
    CHECK(!t);
    CHECK(strstr(err.msg, "trail line 2: step.egress: more entries") != NULL);

    n = snprintf(s, 200, HDR);
    memset(s + n, ' ', big);
    s[n + big] = '\0';
    t = parse(s, &err);
    CHECK(!t);
    CHECK(strstr(err.msg, "trail line 2: longer than") != NULL);
    free(s);
}

/* A torn last line (no newline, not JSON) is dropped with a warning; a
 * whole last line without newline is kept; a torn line in the middle is an
 * error; a torn header is an error. */
static void t_torn(void)
{
    const char *s = HDR "{\"step\":1,\"op\":\"click\"}\n{\"step\":2,\"op\":\"cl";
    replay_err err;
    replay_trail *t = parse(s, &err);
    if (!CHECK(t))
        return;
    CHECK_INT(1, t->nsteps);
    CHECK(strstr(t->warning, "trail line 3: a torn last line") != NULL);
    replay_trail_free(t);

    t = parse(HDR "{\"step\":1,\"op\":\"click\"}", &err);
    if (CHECK(t)) {
        CHECK_INT(1, t->nsteps);
        CHECK_STR("", t->warning);
        replay_trail_free(t);
    }
    /* A complete last line that is wrong is an error, not a torn write. */
    t = parse(HDR "{\"step\":1,\"op\":\"click\",\"zz\":1}", &err);
    CHECK(!t);
    t = parse(HDR "{\"step\":1,\"op\":\"cl\n{\"step\":2,\"op\":\"click\"}\n", &err);
    CHECK(!t);
    CHECK(strstr(err.msg, "trail line 2: not JSON") != NULL);
    t = parse("{\"cdpgate_trail\":1,\"crea", &err);
    CHECK(!t);
    replay_trail_free(t);
}

static void fill_step(replay_step *s, const char *op, const char *name)
{
    memset(s, 0, sizeof *s);
    s->op = (char *)op;
    s->args = (char *)"{\"text\":\"{{who}}\"}";
    s->cls = (char *)"consequential";
    s->has_target = true;
    s->target.role = (char *)"button";
    s->target.name = (char *)name;
    s->target.row = (char *)"March";
    s->state.origin = (char *)"https://bank.test";
    s->state.identity = (char *)"alice";
    s->state.authenticated = true;
}

/* Built trail -> text -> parsed -> text: the same bytes; healing keeps
 * the old revision; the needs come from the steps. */
static void t_roundtrip_heal(void)
{
    replay_trail *t = replay_trail_new("0.1.0", "pay");
    if (!CHECK(t))
        return;
    replay_step s;
    fill_step(&s, "click", "Pay");
    replay_err err;
    CHECK_INT(0, replay_trail_add(t, &s, &err));
    fill_step(&s, "open", NULL);
    s.args = (char *)"{\"url\":\"https://shop.test:8443/a?b=1\"}";
    s.cls = (char *)"read";
    s.has_target = false;
    CHECK_INT(0, replay_trail_add(t, &s, &err));
    fill_step(&s, "click", "Pay now");
    CHECK_INT(0, replay_trail_heal(t, 1, &s, &err));
    CHECK_INT(REPLAY_EARG, replay_trail_heal(t, 9, &s, &err));
    CHECK_STR("invalid argument", replay_strerror(err.code));
    CHECK_INT(3, t->nsteps);
    CHECK(t->steps[0].superseded);
    CHECK_INT(1, t->steps[1].n);
    CHECK_INT(2, t->steps[1].rev);
    CHECK_INT(2, t->steps[2].n);
    CHECK_INT(0, replay_trail_needs(t, &err));
    CHECK_INT(2, t->h.origins.n);
    CHECK_STR("https://shop.test:8443", t->h.origins.v[1]);
    /* Only the live revision's consequential operation is needed. */
    CHECK_INT(1, t->h.nconsequential);
    CHECK_STR("Pay now", t->h.consequential[0].name);
    CHECK_STR("alice", t->h.identities[0].label);
    /* A caller's own allocated step is freed with replay_step_clear. */
    replay_step mine = {0};
    mine.op = strdup("click");
    mine.target.frames.v = calloc(1, sizeof(char *));
    if (mine.target.frames.v) {
        mine.target.frames.v[0] = strdup("https://a.test");
        mine.target.frames.n = 1;
    }
    CHECK_INT(0, replay_trail_add(t, &mine, &err));
    replay_step_clear(&mine);
    CHECK(mine.op == NULL && mine.target.frames.n == 0);
    CHECK_INT(4, t->nsteps);
    CHECK_STR("https://a.test", t->steps[3].target.frames.v[0]);

    char *text = NULL, *text2 = NULL;
    size_t len = 0, len2 = 0;
    CHECK_INT(0, replay_trail_serialize(t, &text, &len, &err));
    replay_trail *p = text ? replay_trail_parse(text, len, &err) : NULL;
    if (CHECK(p)) {
        CHECK_INT(4, p->nsteps);
        CHECK(p->steps[0].superseded && !p->steps[1].superseded);
        CHECK_INT(0, replay_trail_serialize(p, &text2, &len2, &err));
        CHECK(text2 && len == len2 && memcmp(text, text2, len) == 0);
    } else {
        test_fail_detail("%s\n%s", err.msg, text ? text : "");
    }
    free(text);
    free(text2);
    replay_trail_free(p);
    replay_trail_free(t);
}

/* Saved with mode 0600, loaded back; a failed save leaves the old file. */
static void t_save_load(void)
{
    char dir[256], path[300];
    if (testlib_tempdir("replay", dir, sizeof dir) != 0)
        return;
    snprintf(path, sizeof path, "%s/t.trail", dir);
    replay_trail *t = replay_trail_new("0.1.0", NULL);
    replay_step s;
    fill_step(&s, "click", "Pay");
    replay_err err;
    CHECK_INT(0, replay_trail_add(t, &s, &err));
    CHECK_INT(0, replay_trail_save(t, path, &err));
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    replay_trail *l = replay_trail_load(path, &err);
    if (CHECK(l)) {
        CHECK_INT(1, l->nsteps);
        CHECK_STR("Pay", l->steps[0].target.name);
    }
    replay_trail_free(l);
    char bad[320];
    snprintf(bad, sizeof bad, "%s/no/such/dir/t.trail", dir);
    CHECK_INT(REPLAY_EIO, replay_trail_save(t, bad, &err));
    CHECK(strstr(err.msg, "not written") != NULL);
    CHECK(!replay_trail_load(bad, &err));
    CHECK_INT(REPLAY_EIO, err.code);
    /* A torn file on disk (a partial copy) still loads, with the warning. */
    char *text = NULL;
    size_t len = 0;
    CHECK_INT(0, replay_trail_serialize(t, &text, &len, &err));
    FILE *f = fopen(path, "w");
    if (CHECK(f && text)) {
        fwrite(text, 1, len, f);
        fputs("{\"step\":2,\"op\":\"cli", f);
        fclose(f);
        l = replay_trail_load(path, &err);
        CHECK(l && l->nsteps == 1 && strstr(l->warning, "torn") != NULL);
        replay_trail_free(l);
    }
    free(text);
    replay_trail_free(t);
    test_rm_rf(dir);
}

/* Every allocation failure is an error, never a crash or a leak. */
static void t_oom(void)
{
    const char *s = HDR "{\"step\":1,\"op\":\"open\",\"args\":{\"url\":\"https://a.test/\"},"
                        "\"target\":{\"role\":\"link\",\"frames\":[\"x\"]},"
                        "\"effect\":{\"appeared\":[\"y\"]},\"class\":\"consequential\","
                        "\"state\":{\"origin\":\"https://a.test\",\"identity\":\"i\"}}\n";
    for (long n = 0; n < 400; n++) {
        replay_err err;
        test_fail_alloc_after(n, 1);
        replay_trail *t = parse(s, &err);
        char *text = NULL;
        size_t len = 0;
        int rc = t ? replay_trail_serialize(t, &text, &len, &err) : 0;
        test_fail_alloc_off();
        if (t && !rc)
            CHECK(text != NULL);
        free(text);
        replay_trail_free(t);
        if (!t)
            CHECK(err.code == REPLAY_ENOMEM);
    }
}

static const test_case TESTS[] = {
    {"parse_full", t_parse_full},
    {"parse_errors", t_parse_errors},
    {"parse_limits", t_parse_limits},
    {"torn", t_torn},
    {"roundtrip_heal", t_roundtrip_heal},
    {"save_load", t_save_load},
    {"oom", t_oom},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, TESTS);
}
