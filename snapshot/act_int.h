/*
 * act_int.h — internals shared by the act_*.c files only. They are
 * the actions on refs: click, type, select, press, scroll, history,
 * tabs, dialogs and screenshots, with actionability checks and an account of
 * what each action caused.
 *
 * Every action starts the same way: snap_sync, refuse while the current tab
 * (or the ref's tab) has a JS dialog open, check the observation id, resolve
 * the ref (fails closed with what changed), and releases the remote object
 * when done. It ends with snap_settle (event-driven, bounded) and a short
 * result: what happened (navigated, new tab, dialog, no visible change), a
 * compact account of what changed near the element, and a fresh observation
 * id. Results never carry a new full snapshot.
 *
 * Implementation notes
 *  - Round trips are pipelined: commands for one session are sent together
 *    and their replies collected afterwards (a session handles them in
 *    order), so a click costs a few round trips plus the settle window.
 *  - Input goes through Input.dispatch* on the tab's top-level session, like
 *    a user's: coordinates from an out-of-process iframe's session are
 *    relative to that iframe, so the iframe's content-box origin in its
 *    parent (DOM.getFrameOwner + DOM.getBoxModel) is added, up to the main
 *    frame. The hit test (DOM.getNodeForLocation, which pierces shadow roots
 *    and same-process frames) runs at every level, so an overlay in a parent
 *    frame covering an iframe is caught too.
 *  - Input.dispatchMouseEvent/KeyEvent do not reply while a JS dialog opened
 *    by the event is showing. While input replies are pending, a listener
 *    watches for Page.javascriptDialogOpening on the tab; the wait reads one
 *    message at a time (cdp_pump_one) until every reply is in or the dialog
 *    opened, and then forgets the blocked calls (cdp_forget: their late
 *    replies are dropped). The wait is thus "reply or dialog", without a
 *    timer. The dialog is reported, never dismissed.
 *  - Checks that read page state (disabled, visibility, editability) run as
 *    functions on the element (Runtime.callFunctionOn) and return plain
 *    values. A page can lie to them only about itself; the ref's identity
 *    (tab, frame, document, node) comes from CDP, never from page script.
 *  - Temporary remote objects go in the object group "cdpgate-act" of the
 *    sessions they came from and are released before the action returns.
 */
#ifndef CDPGATE_ACT_INT_H
#define CDPGATE_ACT_INT_H

#include "snapshot/snap_int.h"
#include "url/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ACT_GROUP "cdpgate-act"
#define MAX_SESSIONS 8          /* sessions touched by one action (frame chain) */

/* ---- pipelined calls ---- */

typedef struct {
    uint64_t id;
    bool sent;
    int rc;
    cdp_reply rep;
    cdp_err e;
} pcall;

/* Sessions whose ACT_GROUP objects must be released at the end. */
typedef struct {
    char s[MAX_SESSIONS][SNAP_ID_MAX];
    size_t n;
} session_set;

/* What an action needs of a resolved ref, copied out of the agent's tables:
 * the tab array moves when snap_sync adopts a popup, a tab's frame array
 * when the event listener sees a new frame (during any wait), and the ref
 * table when a ref is issued, so no pointer into them is held across a
 * call. Frames are looked up again by id when needed. */
typedef struct {
    uint32_t n;                 /* "e<n>" */
    int tab;
    int backend;
    char frame[SNAP_ID_MAX];
    char session[SNAP_ID_MAX];  /* the frame's session */
    char oid[SNAP_ID_MAX];      /* Runtime object of the node (group "cdpgate") */
    char ref[16];
    char what[400];             /* "e5 (button "Save")" for messages (page text
                                   escaped: see sb_page) */
    uint64_t conn_id;           /* snap_act_resolve_start's pending check */
    bool ax_pending;            /* and a walker ref's AX node (snap_resolved) */
    uint64_t ax_ids[2];
    unsigned kind;
    int64_t world;              /* cdpgate's isolated world of the frame */
} target;

/* A JS dialog as the human who confirms its accept is shown it, kept
 * across the question (the tab's copy goes when the dialog does): the
 * accept runs only while the same one is open (snap_act_recheck_page). */
typedef struct {
    char type[16];               /* alert, confirm, prompt, beforeunload */
    char frame[SNAP_ID_MAX];     /* frameId whose script opened it ("" unknown) */
    char *message;               /* new; page text */
    char *url;                   /* that frame's URL (new, redacted; NULL unknown) */
    const char *text;            /* a prompt's text the agent gives (borrowed; NULL none) */
} act_dialog;

/* Whether the element acted on sits in a form with a password or
 * one-time-code field, and those fields' names (for URL redaction). */
typedef struct {
    bool on;
    char names[8][64];
    size_t n;
} secret_form;

/* What a successful action reports besides the settle outcome. */
typedef struct {
    const char *action;        /* "click", "type", ... */
    const char *ref;           /* "e5" or NULL */
    base_buf page;             /* page-derived detail (marked as such), may be empty */
    json_w extra;              /* extra structured members (key/value pairs), may be empty */
    bool has_extra;
    /* The action may have submitted a form with a password or one-time-code
     * field: URLs are redacted strictly, also hiding those fields' names. */
    secret_form sf;
    /* The recorder was read (snap_act_report_recorded): with nothing in
     * page, dialog or navigation, the result can say nothing changed. */
    bool watched;
    bool changed;              /* it saw something change on the page */
    bool added;                /* it saw nodes added or shown (P5b: new controls) */
    bool states;               /* the element's states were read back */
    int restyled;              /* elements restyled with what they show unknown */
} act_report;

/* ---- locating an element for input ---- */

typedef struct {
    int x, y;                   /* top-level coordinates of the click point */
    int lx, ly;                 /* the same point in the element's session */
    bool option;                /* an <option> of a <select> */
    char tag[16];
    secret_form sf;             /* it is in a form with a password/OTP field */
} located;

typedef struct {
    char key[16];               /* KeyboardEvent.key */
    char code[24];              /* KeyboardEvent.code, "" when unknown */
    int vk;                     /* windowsVirtualKeyCode */
    char text[8];               /* what the key types, "" for none */
} keydef;

/* ---- act_util.c ---- */

double snap_act_dmin(double x, double y);
double snap_act_dmax(double x, double y);
double snap_act_dfloor(double x);
double snap_act_dceil(double x);
void snap_act_utf8_repair(char *s);
void snap_act_sb_page(base_buf *b, const char *s, size_t max, unsigned mode);
void snap_act_sb_quoted(base_buf *b, const char *s, size_t max);
const char *snap_act_pg(char *buf, size_t cap, const char *s);
void snap_act_sb_url(base_buf *b, const char *url, size_t max);
/* A navigation's URL: its origin, then its path and query inside a's
 * page-content markers (red team s18, R8-2). */
void snap_act_sb_nav_url(const snap_agent *a, base_buf *b, const char *url, size_t max);
void snap_act_redact_tab_urls(snap_agent *a, int tab_id, bool strict, const char *const *fields);
int snap_act_fail(snap_result *r, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
char *snap_act_params(const char *spec, ...);
char *snap_act_fn_params(const char *oid, const char *fn, const char *args, bool by_value,
                         bool await_promise);
char *snap_act_arg_str(const char *s);
char *snap_act_arg_obj(const char *oid);
void snap_act_psend(snap_agent *a, const char *session, const char *method, char *prm,
                    pcall *pc);
void snap_act_send_forget(snap_agent *a, const char *session, const char *method, char *prm);
void snap_act_psend_p(snap_agent *a, const char *session, const char *method, char *prm,
                      pcall *pc);
int snap_act_pwait(snap_agent *a, pcall *pc);
void snap_act_pfree(pcall *pc);
/* Wait for n DOM.resolveNode calls rs and append to the call-argument array
 * being written in w one argument each: the node's objectId, or null for a
 * node that is gone. Frees the replies. */
void snap_act_args_resolved(snap_agent *a, pcall *rs, size_t n, json_w *w);
int snap_act_call(snap_agent *a, const char *session, const char *method, char *prm,
                  pcall *pc);
int snap_act_call0(snap_agent *a, const char *session, const char *method, pcall *pc);
const json_val *snap_act_fn_value(const pcall *pc);
const char *snap_act_fn_object(const pcall *pc);
void snap_act_sessions_note(session_set *ss, const char *session);
void snap_act_sessions_release(snap_agent *a, session_set *ss);

/* ---- act_shot_mask.c ---- */

/* The sessions of a tab where a screenshot's mask is set (an opaque
 * overlay on the secret fields with a value) and how many fields it covers. */
#define SNAP_SHOT_MASK_MAX 16
#define SNAP_SHOT_FRAMES_MAX 64
#define SNAP_SHOT_VIEW_MAX 32
typedef struct {
    char s[SNAP_SHOT_MASK_MAX][SNAP_ID_MAX];    /* the sessions with a highlight */
    int64_t sw[SNAP_SHOT_MASK_MAX];             /* the world of each one's masked frame */
    size_t n;
    int fields;
    struct {
        char session[SNAP_ID_MAX];
        int64_t world;
    } w[SNAP_SHOT_FRAMES_MAX];                  /* the worlds watching their fields */
    size_t nw;
    char f[SNAP_SHOT_MASK_MAX][SNAP_ID_MAX];    /* the masked frame of each session */
    int nf[SNAP_SHOT_MASK_MAX];                 /* and its fields */
    int out;                                    /* fields in frames out of view */
    struct {
        char session[SNAP_ID_MAX];
        int64_t world;
        int idx;
        bool need;                              /* it must stay out of view */
    } v[SNAP_SHOT_VIEW_MAX];                    /* watches of the iframes around
                                                   masked frames out of view */
    size_t nv;
    int tab_id;
    char fid[SNAP_SHOT_FRAMES_MAX][SNAP_ID_MAX];    /* the frames searched */
    size_t nfid;
} snap_shot_mask;
/* Mask, in every frame of tab tab_id, the secret fields with a value (the
 * snapshot's rules and the fields noted secret): 0 (m->fields masked,
 * perhaps 0), or SNAP_EDENIED when they cannot all be masked (nothing
 * left set). Every frame searched watches its fields from then on. Each
 * masked frame has drawn its mask, but (in_view: the capture lies in the
 * viewport) one whose iframe is out of the viewport (m->out fields;
 * act_shot_view.c). After the capture, snap_shot_mask_check then
 * snap_shot_mask_off, always. */
int snap_shot_mask_on(snap_agent *a, int tab_id, bool in_view, snap_shot_mask *m,
                      snap_result *r);
/* Whether the secret fields of every frame searched are still those the
 * search found, unchanged (nothing watched changed, the same search finds
 * the same fields), and the tab has no frame that was not searched (a
 * loading=lazy iframe a crop's scroll loaded): 0, or 1 (changed, or it
 * could not be told). */
int snap_shot_mask_check(snap_agent *a, snap_shot_mask *m);
void snap_shot_mask_off(snap_agent *a, snap_shot_mask *m);
/* Whether a masked secret field's box meets the rectangle x, y, w, h (the
 * tab's top-level viewport px, the visual viewport's top left at 0, 0):
 * true when one does or it cannot be told. The browser paints the mask in
 * the viewport's own place: a capture clipped elsewhere (a region, an
 * element, a crop not at the viewport's top left) shows such a field
 * where the mask is not, and must not be taken (gate21). */
bool snap_shot_mask_meets(snap_agent *a, const snap_shot_mask *m, double x, double y, double w,
                          double h);
/* Whether the element of a screenshot's ref is a secret field (noted, or by
 * the rules); true when it cannot be told. */
bool snap_shot_ref_secret(snap_agent *a, int tab_id, const char *frame_id, int backend,
                          const char *session, const char *oid);

/* ---- act_shot_view.c ---- */

/* Whether frame frame_id's iframe, or that of a frame around it, lies out
 * of the top-level viewport (then nothing of it can show in a capture of
 * the viewport); when true, the iframe is watched (m->v) until
 * snap_shot_view_check or _off. Objects taken are noted in ss. */
bool snap_shot_view_out(snap_agent *a, int tab_id, const char *frame_id, snap_shot_mask *m,
                        session_set *ss);
/* After the capture: 0 when every iframe watched stayed out of view in
 * each frame drawn meanwhile, 1 otherwise (or when it cannot be told).
 * Stops the watches. */
int snap_shot_view_check(snap_agent *a, snap_shot_mask *m);
void snap_shot_view_off(snap_agent *a, snap_shot_mask *m);

/* ---- act_result.c ---- */

int snap_act_refuse_dialog(snap_agent *a, snap_tab *t, snap_result *r);
int snap_act_begin(snap_agent *a, const char *obs, snap_tab **out, snap_result *r);
void snap_act_release_object(snap_agent *a, const char *session, char oid[SNAP_ID_MAX]);
int snap_act_resolve(snap_agent *a, const char *ref, target *tg, snap_result *r);
/* snap_act_resolve in two steps (snap_ref_resolve_start/_check): between
 * them the caller may send read-only calls on tg->oid, answered in the
 * same round trip as the check that the node is in the document. _check
 * fails closed (tg->oid released) when it is not; nothing may be acted on
 * before it. */
int snap_act_resolve_start(snap_agent *a, const char *ref, target *tg, snap_result *r);
int snap_act_resolve_check(snap_agent *a, target *tg, snap_result *r);
void snap_act_secret_form_note(secret_form *sf, const json_val *v);
void snap_act_secret_form_known(snap_agent *a, int tab_id, const char *frame_id,
                                const char *session, const char *oid, secret_form *sf);
void snap_act_secret_form_arm(snap_agent *a, const secret_form *sf);
void snap_act_json_url(json_w *w, const char *url);
int snap_act_result_end(json_w *w, base_buf *b, snap_result *r);
void snap_act_report_init(act_report *rp, const char *action, const char *ref);
void snap_act_report_free(act_report *rp);
int snap_act_settle_after(snap_agent *a, int tab_id, uint64_t nav0, size_t tabs0,
                          int64_t deadline, uint64_t frame_call, const char *did,
                          snap_settled *st, snap_result *r);
int snap_act_settle(snap_agent *a, int tab_id, uint64_t nav0, size_t tabs0, int64_t deadline,
                    const char *did, snap_settled *st, snap_result *r);
int snap_act_settle_light(snap_agent *a, int tab_id, uint64_t nav0, size_t tabs0,
                          uint64_t own_seq0, int64_t deadline, const char *did,
                          snap_settled *st, bool *quiet, snap_result *r);
bool snap_act_page_usable(snap_agent *a, int tab_id, const snap_settled *st);
int snap_act_finish(snap_agent *a, int tab_id, const char *did, const snap_settled *st0,
                    act_report *rp, snap_result *r);
int snap_act_call_off(snap_gated *g, const char *tool, const char *what, const char *change,
                      snap_result *r);
int snap_act_focus_lost(snap_gated *g, const char *tool, const char *what, const char *to,
                        snap_result *r);
int snap_act_focus_where(snap_agent *a, const char *session, const char *oid, char *to,
                         size_t cap);
const char *snap_act_change_phrase(int code);
int snap_act_recheck_target(snap_agent *a, snap_gated *g, const char *tool, const target *tg,
                            session_set *ss, located *loc, snap_result *r);
int snap_act_recheck_page(snap_agent *a, snap_gated *g, const char *tool, int tab_id,
                          uint64_t nav0, const act_dialog *dialog, snap_result *r);
void snap_act_collect_changes(snap_agent *a, const char *session, const char *obs_oid,
                              const char *elem_oid, act_report *rp);
void snap_act_states_line(const act_report *rp, char *buf, size_t cap);
void snap_act_report_recorded(const json_val *v, const char *skip, bool secret, bool focus,
                              act_report *rp);
void snap_act_release_all(snap_agent *a, target *tg, session_set *ss);

/* ---- act_input.c ---- */

int snap_act_dispatch_input(snap_agent *a, int tab_id, const char *session_in,
                            const char *const *methods, char **prms, size_t n, bool *dialog,
                            snap_result *r);
int snap_act_mouse_click(snap_agent *a, int tab_id, int x, int y, bool second, bool *dialog,
                         snap_result *r);
/* A click the human confirmed: the pointer moved to loc, then pressed only
 * when the node there is still tg's element (else SNAP_ECOVERED, "the page
 * moved another element under the pointer: not clicked"). */
int snap_act_judged_click(snap_agent *a, const target *tg, const located *loc, session_set *ss,
                          bool *dialog, snap_result *r);
int snap_act_dbl_click(snap_agent *a, const snap_gated *g, const target *tg, const located *loc,
                       uint64_t nav0, session_set *ss, bool *dialog, char *why, size_t cap,
                       snap_result *r);
void snap_act_dbl_note(act_report *rp, char *did, size_t cap, const char *why);
int snap_act_mouse_move(snap_agent *a, int tab_id, int x, int y, bool *dialog, snap_result *r);
bool snap_act_name_eq(const char *a, size_t alen, const char *b);
size_t snap_act_key_events(const keydef *k, int mods, const char **methods, char **prms);

/* Where frame frame_id's session viewport sits in the tab's top-level
 * viewport: (*ox, *oy) is the sum of the content-box origins of the
 * iframes of each out-of-process frame above it (0, 0 in the tab's own
 * process), and clip (x0, y0, x1, y1, top-level viewport px) the part of
 * it those iframes show (unbounded when there are none). 0, or a SNAP_E*
 * code with r (what names the element in messages). */
int snap_act_frame_origin(snap_agent *a, int tab_id, const char *frame_id, const char *what,
                          double *ox, double *oy, double clip[4], snap_result *r);
/* ---- act_locate.c ---- */

void snap_act_ax_role_name(const json_val *ax, const json_val *desc, char *role, size_t rcap,
                           char *name, size_t ncap);
int snap_act_locate(snap_agent *a, int tab_id, const char *frame_id, const char *oid,
                    int backend, const char *what, bool check_enabled, session_set *ss,
                    located *loc, snap_result *r);
bool snap_act_hit_still(snap_agent *a, const target *tg, const located *loc, session_set *ss,
                        char *what, size_t cap);

/* ---- act_pointer.c ---- */

/* How a gated action on the current tab starts: g and r zeroed, the
 * targets synced; the current tab, or NULL when none is open (nothing to
 * act on: the action fails by itself, before sending anything). */
snap_tab *snap_act_gate_begin(snap_agent *a, snap_gated *g, snap_result *r);
int snap_act_gate_page(snap_agent *a, const char *tool, bool state_change, bool submit,
                       const act_dialog *dialog, const char *obs, snap_gated *g,
                       snap_result *r);

#endif
