/*
 * trail_write.c — a trail as JSON Lines (the serializer), and the trail
 * file: read whole with a size limit, written all or nothing, mode 0600.
 *
 * The serializer writes fields in a fixed order and leaves out what is
 * empty (NULL strings, empty lists, false flags, index 0), so a trail reads
 * well to a person and round-trips through replay_trail_parse. The file is
 * replaced whole on every save (base_file_put: temporary file, fsync,
 * rename, fsync of the directory), so a reader sees the old trail or the
 * new one, never half of one.
 */
#include "replay/replay_int.h"

#include "json/json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void w_opt(json_w *w, const char *key, const char *v)
{
    if (!v)
        return;
    json_w_key(w, key);
    json_w_str(w, v);
}

static void w_list(json_w *w, const char *key, const replay_list *l)
{
    if (!l->n)
        return;
    json_w_key(w, key);
    json_w_arr_begin(w);
    for (size_t i = 0; i < l->n; i++)
        json_w_str(w, l->v[i]);
    json_w_arr_end(w);
}

static void w_header(json_w *w, const replay_header *h)
{
    json_w_obj_begin(w);
    json_w_key(w, "cdpgate_trail");
    json_w_uint(w, h->version);
    w_opt(w, "created", h->created);
    w_opt(w, "cdpgate", h->cdpgate);
    w_opt(w, "task", h->task);
    if (h->by_agent)
        w_opt(w, "by", "agent");
    if (h->agent_editable) {
        json_w_key(w, "agent_editable");
        json_w_bool(w, true);
    }
    w_opt(w, "trail_key", h->trail_key);
    json_w_key(w, "needs");
    json_w_obj_begin(w);
    json_w_key(w, "origins");
    json_w_arr_begin(w);
    for (size_t i = 0; i < h->origins.n; i++)
        json_w_str(w, h->origins.v[i]);
    json_w_arr_end(w);
    json_w_key(w, "identities");
    json_w_obj_begin(w);
    for (size_t i = 0; i < h->nidentities; i++) {
        json_w_key(w, h->identities[i].origin);
        json_w_str(w, h->identities[i].label);
    }
    json_w_obj_end(w);
    json_w_key(w, "tools");
    json_w_arr_begin(w);
    for (size_t i = 0; i < h->tools.n; i++)
        json_w_str(w, h->tools.v[i]);
    json_w_arr_end(w);
    json_w_key(w, "egress");
    json_w_arr_begin(w);
    for (size_t i = 0; i < h->egress.n; i++)
        json_w_str(w, h->egress.v[i]);
    json_w_arr_end(w);
    json_w_key(w, "consequential");
    json_w_arr_begin(w);
    for (size_t i = 0; i < h->nconsequential; i++) {
        const replay_bound *b = &h->consequential[i];
        json_w_obj_begin(w);
        w_opt(w, "origin", b->origin);
        w_opt(w, "tool", b->tool);
        w_opt(w, "name", b->name);
        w_opt(w, "row", b->row);
        json_w_obj_end(w);
    }
    json_w_arr_end(w);
    json_w_obj_end(w);
    json_w_obj_end(w);
}

static void w_target(json_w *w, const replay_target *g)
{
    json_w_key(w, "target");
    json_w_obj_begin(w);
    w_opt(w, "role", g->role);
    w_opt(w, "name", g->name);
    w_opt(w, "row", g->row);
    w_opt(w, "section", g->section);
    if (g->index) {
        json_w_key(w, "index");
        json_w_uint(w, g->index);
    }
    if (g->equals) {
        json_w_key(w, "equals");
        json_w_uint(w, g->equals);
    }
    w_list(w, "frames", &g->frames);
    w_opt(w, "id", g->id);
    w_opt(w, "name_attr", g->name_attr);
    w_opt(w, "label", g->label);
    w_opt(w, "placeholder", g->placeholder);
    w_opt(w, "testid", g->testid);
    json_w_obj_end(w);
}

static void w_step(json_w *w, const replay_step *s)
{
    json_w_obj_begin(w);
    json_w_key(w, "step");
    json_w_uint(w, s->n);
    json_w_key(w, "rev");
    json_w_uint(w, s->rev);
    w_opt(w, "op", s->op);
    json_w_key(w, "args");
    json_w_raw(w, s->args ? s->args : "{}", s->args ? strlen(s->args) : 2, true);
    w_opt(w, "class", s->cls);
    w_list(w, "egress", &s->egress);
    if (s->has_target)
        w_target(w, &s->target);
    json_w_key(w, "state");
    json_w_obj_begin(w);
    w_opt(w, "origin", s->state.origin);
    w_opt(w, "url", s->state.url);
    w_opt(w, "title", s->state.title);
    json_w_key(w, "authenticated");
    json_w_bool(w, s->state.authenticated);
    w_opt(w, "identity", s->state.identity);
    json_w_obj_end(w);
    json_w_key(w, "effect");
    json_w_obj_begin(w);
    w_opt(w, "navigated", s->effect.navigated);
    w_opt(w, "new_tab", s->effect.new_tab);
    w_opt(w, "dialog", s->effect.dialog);
    w_list(w, "appeared", &s->effect.appeared);
    w_opt(w, "value", s->effect.value);
    json_w_obj_end(w);
    w_opt(w, "output", s->output);
    if (s->secret) {
        json_w_key(w, "secret");
        json_w_bool(w, true);
    }
    w_opt(w, "note", s->note);
    if (s->by_agent)
        w_opt(w, "by", "agent");
    json_w_obj_end(w);
}

/* Append the writer's line and a newline to b; the writer is reset. */
static int put_line(json_w *w, base_buf *b)
{
    if (json_w_error(w))
        return json_w_error(w) == JSON_ENOMEM ? REPLAY_ENOMEM : REPLAY_EARG;
    base_buf_put(b, w->buf, w->len);
    base_buf_putc(b, '\n');
    json_w_reset(w);
    return 0;
}

int replay_trail_serialize(const replay_trail *t, char **out, size_t *len, replay_err *err)
{
    json_w w;
    base_buf b = {0};
    if (err)
        memset(err, 0, sizeof *err);
    json_w_init(&w);
    w.max = REPLAY_MAX_LINE;
    *out = NULL;
    w_header(&w, &t->h);
    int rc = put_line(&w, &b);
    for (size_t i = 0; !rc && i < t->nsteps; i++) {
        w_step(&w, &t->steps[i]);
        rc = put_line(&w, &b);
        if (rc)
            replay_fail(err, rc, 0, "step %u cannot be written (%s)", t->steps[i].n,
                        rc == REPLAY_ENOMEM ? "out of memory" : "a value is not valid");
    }
    if (!rc && b.oom)
        rc = replay_fail(err, REPLAY_ENOMEM, 0, "out of memory writing the trail");
    if (rc && err && !err->code)
        replay_fail(err, rc, 0, "the header cannot be written");
    json_w_free(&w);
    if (!rc && b.len > REPLAY_MAX_TRAIL)
        rc = replay_fail(err, REPLAY_ELIMIT, 0, "larger than %zu bytes", REPLAY_MAX_TRAIL);
    if (!rc) {
        *out = base_buf_take(&b, len);
        if (!*out)
            rc = replay_fail(err, REPLAY_ENOMEM, 0, "out of memory writing the trail");
    }
    base_buf_free(&b);
    return rc;
}

replay_trail *replay_trail_load(const char *path, replay_err *err)
{
    if (err)
        memset(err, 0, sizeof *err);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        replay_fail(err, REPLAY_EIO, 0, "%s: %s", path, strerror(errno));
        return NULL;
    }
    base_buf b = {0};
    char chunk[65536];
    bool failed = false;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            replay_fail(err, REPLAY_EIO, 0, "%s: %s", path, strerror(errno));
            failed = true;
            break;
        }
        if (n == 0)
            break;
        if (b.len + (size_t)n > REPLAY_MAX_TRAIL) {
            replay_fail(err, REPLAY_ELIMIT, 0, "%s: larger than %zu bytes", path,
                        REPLAY_MAX_TRAIL);
            failed = true;
            break;
        }
        base_buf_put(&b, chunk, (size_t)n);
    }
    close(fd);
    replay_trail *t = NULL;
    if (b.oom)
        replay_fail(err, REPLAY_ENOMEM, 0, "%s: out of memory", path);
    else if (!failed)
        t = replay_trail_parse(b.s ? b.s : "", b.len, err);
    base_buf_free(&b);
    return t;
}

int replay_trail_save(const replay_trail *t, const char *path, replay_err *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = replay_trail_serialize(t, &text, &len, err);
    if (rc)
        return rc;
    int step = 0;
    if (base_file_put(AT_FDCWD, path, text, len, BASE_PUT_REPLACE, &step) != 0) {
        int e = errno;
        rc = replay_fail(err, REPLAY_EIO, 0, "%s: %s (%s)", path, strerror(e),
                         step == BASE_PUT_ESYNC ? "written, directory not synced"
                                                : "not written, the old trail is kept");
    }
    free(text);
    return rc;
}
