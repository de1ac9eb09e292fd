/*
 * snap_int.h — internals shared by the files of snapshot/ only.
 *
 * Tests that include it (a test may include a module's internal header to
 * test its internals; product code never does: tests/checklayers.sh checks
 * both, and that every such test is named here):
 *   tests/test_snapshot.c    the AX and DOM digests and shapes, the cache,
 *                            the tab table (snap_tab_current, snap_sync)
 *   tests/test_actions.c     refs and frames behind an action (snap_ref_for,
 *                            snap_obs_issue, snap_tab_by_id), URL redaction
 *   tests/test_gate_accept.c the current tab and its sync with the browser
 *   tests/test_login.c       the current tab, tabs by id
 *   tests/test_takeover.c    the current tab; the sink's 'human' permit
 *                            refused outside the human's control
 *   tests/fuzz/fuzz_url.c    snap_url_redact on the URL parser's inputs
 *   tests/fuzz/fuzz_sink.c   snap_cover_check, snap_sent_recipients and snap_sent_values
 *                            (sink_body.c)
 *                            on page-built request bodies
 *
 * Files (the module's layers; internal headers: agent_int.h, observe_int.h,
 * act_int.h, session_int.h; every page script in page_js.c):
 *   state       agent.c        the agent: tabs, frames, sessions, events
 *                              (dialogs, popups, navigations, network in
 *                              flight), results, open
 *               agent_refs.c   refs, fields that were ever secret, observations
 *               agent_wait.c   waiting for the consequences of an action
 *   perception  observe_tree.c the view tree's blocks: text, id sets, fetch
 *                              state, view nodes, roles
 *               observe_ax.c   accessibility tree parsing (a stream)
 *               observe_dom.c  DOM snapshot parsing (a stream)
 *               observe_build.c  the view tree, secret values, row context
 *               observe_render.c lines, budget, paging, snap_build
 *               observe_walk.c   the in-page walker's view (the default)
 *               observe_cache.c  the cache, what an action brought into view
 *   actuation   act_util.c     numbers, page text and URLs in results,
 *                              params, pipelined calls
 *               act_result.c   prologue, results, re-check after a
 *                              confirmation, what changed
 *               act_input.c    input dispatch, keys, press
 *               act_locate.c   locating and actionability
 *               act_pointer.c  click, scroll
 *               act_form.c     type, select, upload
 *               act_page.c     eval, history, tabs, dialogs
 *               act_shot.c     screenshot, a scan's crops
 *   trust       sink.c         the one path to the browser
 *               policy.c       asking the gate
 *               session.c      browser contexts, session restore, login
 *               session_check.c  the login wall, whether a context still
 *                              holds its session, auth=
 *               scrub.c        session values never shown; refused requests
 *                              shown without their path and query
 *               page_js.c      every page script (the walker's: page_walk.c)
 */
#ifndef CDPGATE_SNAP_INT_H
#define CDPGATE_SNAP_INT_H

#include "snapshot/snapshot.h"

#include <stdarg.h>

#include "base/base.h"
#include "gate/gate.h"
#include "json/json.h"

#define SNAP_ID_MAX 128          /* CDP ids (frame, loader, target, session) */
#define SNAP_PROBLEMS_MAX 10     /* problems kept per tab (agent_problems.c) */
#define SNAP_PERMIT_MAX 16       /* a sink permit name, NUL included */

typedef struct {
    char id[SNAP_ID_MAX];        /* frameId */
    char parent[SNAP_ID_MAX];    /* parent frameId, "" for the main frame */
    char session[SNAP_ID_MAX];   /* session that owns the frame's document:
                                    the tab's for same-process frames, the
                                    iframe target's for out-of-process ones */
    char loader[SNAP_ID_MAX];    /* loaderId of the current document */
    char *url;                   /* current URL (new) */
    char origin[256];            /* security origin */
    bool oopif;
    bool gone;                   /* detached */
    bool mute;                   /* its process did not answer within the
                                    per-action timeout (its set-up or a
                                    snapshot's read): a snapshot does not
                                    read it, and says so, until it answers
                                    again (snap_session_mute) */
    /* cdpgate's isolated world in the frame's current document (the
     * execution context id, 0 when none made yet; snap_frame_world): valid
     * for the loader and session it was made for. */
    int64_t world;
    char world_loader[SNAP_ID_MAX];
    char world_session[SNAP_ID_MAX];
} snap_frame;

/* A network request in flight (Network.requestWillBeSent until
 * loadingFinished/loadingFailed). url is the page's (new; cut at '?' or
 * '#' when recorded: no query or fragment value is ever kept; shown only
 * through snap_settled_describe's redaction). own: it started while an
 * action's consequences were awaited (the main frame loading, within
 * SNAP_OWN_MS of a state-changing command let out by the sink, or within
 * SNAP_CHAIN_MS of an own request's end). */
#define SNAP_REQ_MAX 64
typedef struct {
    char id[SNAP_ID_MAX];        /* requestId */
    char method[8];
    char type[20];               /* Network.ResourceType, "" unknown */
    char *url;
    int64_t start_ms;            /* base_now_ms() when it was seen to start */
    int64_t last_ms;             /* ... and when it was last heard of */
    uint64_t nav;                /* the tab's nav when it started: a request of
                                    an earlier document is forgotten */
    bool own;
    bool human;                  /* started while the human had control: url is
                                    its scheme://host:port alone */
    bool answered;               /* its response came (a body nobody reads may
                                    never finish loading: see agent_wait.c) */
} snap_req;
#define SNAP_OWN_MS 150
#define SNAP_CHAIN_MS 30

typedef struct {
    int id;                      /* shown as "t<id>" */
    char target[SNAP_ID_MAX];
    char session[SNAP_ID_MAX];
    bool created;                /* this agent opened it (closed at free) */
    bool closed;                 /* closed or crashed: never adopted again */
    bool discarded;              /* made by an open that failed, then closed: not listed */
    int opener;                  /* tab id of the opener for popups, else 0 */
    snap_frame *frames;          /* frames[0] is the main frame */
    size_t nframes, capframes;
    uint64_t nav;                /* bumps on every new main-frame document */
    uint64_t inpage;             /* bumps on every same-document navigation of the
                                    main frame (a hash route, pushState) */
    uint64_t inpage_mark;        /* inpage when the current action began */
    char *title;                 /* last known (new) */
    /* JS dialog, from Page.javascriptDialogOpening until answered/closed */
    bool dialog_open;
    char dialog_type[16];        /* alert, confirm, prompt, beforeunload */
    char *dialog_message;        /* new; page text: untrusted */
    char *dialog_default;        /* prompt default (new) */
    char dialog_frame[SNAP_ID_MAX]; /* frameId whose script opened it ("" unknown) */
    char *dialog_url;            /* that frame's URL as the event gave it (new;
                                    redacted as frame URLs are; NULL unknown) */
    /* agent_wait.c: the network requests in flight on this tab's sessions
     * (settling waits for the action's own ones; the rest are named as
     * still pending): reqs[0..nreqs) (new, SNAP_REQ_MAX at most; a request
     * past that is counted in reqs_lost and never waited for). own_seq
     * counts the own requests ever started (snap_act_settle_light). */
    snap_req *reqs;
    size_t nreqs;
    uint64_t reqs_lost;
    uint64_t own_seq;
    /* Events that can be an action's consequence, for the settle's quiet
     * window: Page events but lifecycle ones, own requests' starts and
     * ends, requests the gate refused. (Another request's events do not
     * count.) */
    uint64_t settle_evt;
    bool loading;                /* main frame between frameStartedLoading and load */
    struct snap_cache *cache;    /* observe_cache.c: the last snapshot built (owned;
                                    freed with snap_cache_free) */
    size_t ctx;                  /* index in agent->ctxs; never changes */
    /* agent.c: the HTTP status of the main frame's document response
     * (Network.responseReceived, type Document) and that document's loader;
     * 0 and "" before one came. */
    int doc_status;
    /* The browser's log errors since the document loaded (agent_problems.c):
     * the count and the last SNAP_PROBLEMS_MAX texts, a ring. */
    char *problem[SNAP_PROBLEMS_MAX];
    size_t nproblems;
    uint64_t problems_nav;       /* t->nav they belong to */
    char doc_loader[SNAP_ID_MAX];
    uint64_t seen_nav;           /* nav when the agent last got an observation of */
    uint32_t seen_obs;           /* the tab (snap_obs_issue), and its number */
} snap_tab;

/* A browser context (session.c). ctxs[0] is the agent's untrusted one. */
enum {
    SNAP_CTX_UNTRUSTED,          /* the open web */
    SNAP_CTX_AUTH,               /* privileged: holds a restored or captured session */
    SNAP_CTX_LOGIN,              /* privileged: a login handoff runs in it */
    SNAP_CTX_REJECTED,           /* privileged, but the service dropped the session's
                                    credentials (cookies and localStorage gone) */
    SNAP_CTX_STALE,              /* privileged, forgotten (a newer session exists) */
};
typedef struct {
    char id[SNAP_ID_MAX];        /* browserContextId; "" = the default context */
    char origin[256];            /* the service; "" for the untrusted context */
    int state;                   /* SNAP_CTX_* */
    bool created;                /* we created it: disposed at agent free */
    bool check;                  /* first open after the restore not done yet */
    bool creds;                  /* holds a session restored from the vault or
                                    captured by a login: its tabs on its origin are
                                    authenticated until the service drops it */
    char *ck_names;              /* names (never values) of that session's cookies
                                    and its localStorage keys, "\nname\n..." (new; */
    char *ls_keys;               /* NULL when none): what must be gone before the
                                    session counts as dropped */
    bool names_lost;             /* a name could not be kept: never judged dropped */
    int64_t captured;            /* vault capture time of its session */
    char *pending_ls;            /* localStorage to set before the first
                                    navigation: JSON [[k,v],...] (new; wiped) */
    int lease;                   /* vault identity lease fd + 1; 0 = none */
    bool person;                 /* ctxs[0] only: a person held control in it (a
                                    takeover; red team s18, R8-6): its tabs count as
                                    holding a session from then on (fail closed) */
} snap_ctx;

/* A document refs were issued in: (tab, frame, loader). Interned: every ref
 * of a document points at one, so a ref costs 24 bytes and its name. */
typedef struct {
    int tab;
    char frame[SNAP_ID_MAX];
    char loader[SNAP_ID_MAX];
} snap_refdoc;

typedef struct {
    uint32_t n;                  /* "e<n>" */
    uint32_t doc;                /* a->refdocs[doc] */
    int backend;                 /* backendDOMNodeId; < 0: a walker ref, the
                                    walker's element id negated (resolved at
                                    action time: snap_ref_resolve) */
    uint16_t role;               /* a->ref_roles[role] */
    uint16_t gate_role;          /* walker refs: the AX role read at the last
                                    resolve, a->ref_roles[gate_role] */
    char *name;                  /* accessible name at issue (new) */
    char *gate_name;             /* walker refs: the AX name read at the last
                                    resolve (new; NULL: not read) */
} snap_ref;
/* Free what a ref owns (its names). */
void snap_ref_clear(snap_ref *rf);
/* The role and name the gate classifies a ref's element by: the AX node's.
 * An AX ref's, as issued; a walker ref's, read from the AX node of the
 * element at its last resolve (never the walker's; "" before one). */
const char *snap_ref_gate_role(const snap_agent *a, const snap_ref *rf);
const char *snap_ref_gate_name(const snap_ref *rf);

typedef struct {
    uint32_t n;                  /* "o<n>" */
    int tab;
    uint64_t nav;                /* tab->nav when issued */
    uint64_t epoch;              /* control epoch when issued */
} snap_obs_rec;

/* A paused data-carrying request of an authenticated context waiting for
 * the human (sink.c): answered by snap_sink_asks, never in the listener. */
#define SNAP_ASK_MAX 16
typedef struct {
    char rid[SNAP_ID_MAX];       /* Fetch requestId */
    char *method, *url, *fields; /* new; url redacted, fields names only */
    char *values;                /* new; its recipients and amounts (snap_sent_values) */
    char origin[256];            /* the authenticated service origin */
    char resource[24];
    bool document;
    bool get;                    /* a GET or HEAD carrying no data */
    int covered;                 /* the cover it was sent under (-1: none) */
    bool shown_other;            /* ... to another address than shown (R9-1) */
    int tab;                     /* 0: not one of the agent's tabs */
    uint64_t epoch;              /* the control epoch it was sent under */
} snap_ask;

#define SNAP_BLOCKED_MAX 16
typedef struct {
    int tab;                     /* 0: not one of the agent's tabs */
    char text[400];              /* redacted URL and the reason */
} snap_blocked;

typedef struct snap_scrub snap_scrub;   /* scrub.c */
typedef struct snap_secval snap_secval; /* secval.c */
typedef struct snap_signin snap_signin; /* signin.c */

/* download.c: one download the browser reported (issue 13, points 6d and
 * round 2: R1 R4 R6 R8). */
#define SNAP_DL_MAX 16           /* downloads of the agent's actions remembered (a ring;
                                    one still undecided or running is never evicted) */
#define SNAP_DL_NAME_MAX 81      /* a sanitized file name, with its NUL */
#define SNAP_DL_CANCEL_MAX 64    /* page-started downloads waiting to be canceled */
#define SNAP_DL_WANT_MAX 8       /* URLs an action's target implies (and their redirects) */
#define SNAP_DL_TASK_FILES 32    /* files saved per task, at most */
#define SNAP_DL_TASK_BYTES (512LL * 1024 * 1024)   /* bytes saved per task, at most */
enum { SNAP_DL_RUNNING, SNAP_DL_SAVED, SNAP_DL_BLOCKED, SNAP_DL_FAILED, SNAP_DL_PENDING,
       SNAP_DL_DENIED };
typedef struct {
    char guid[SNAP_ID_MAX];      /* the browser's id (hex and '-') */
    int tab;                     /* the tab whose frame started it; 0: unknown */
    int64_t start_ms;            /* base_now_ms() at downloadWillBegin */
    char name[SNAP_DL_NAME_MAX]; /* the suggested name, sanitized */
    char file[SNAP_ID_MAX];      /* saved as: name, name-2..., or the guid */
    int64_t total, received;     /* bytes (the saved file's size once saved) */
    char mime[64];               /* the attachment's type when known, else "" */
    int state;                   /* SNAP_DL_*; PENDING: the gate has not decided yet */
    bool done;                   /* the browser completed it before the decision */
    bool over;                   /* it passed the task's byte cap: to cancel */
    bool page;                   /* begun during an action, but not the file its
                                    target implies: the page's (red team s11, S10) */
    char ctx[SNAP_ID_MAX];       /* its browser context ("": the default one) */
    char url[256];               /* its URL, redacted and scrubbed (cut) */
    char why[160];               /* DENIED: the gate's reason */
} snap_download;

/* A download the page started by itself, outside an allowed action of the
 * agent: canceled at the next sync, audited, told in the next result. */
typedef struct {
    char guid[SNAP_ID_MAX];
    char ctx[SNAP_ID_MAX];
    char name[SNAP_DL_NAME_MAX];
    char url[256];
} snap_dl_page;

typedef struct snap_rec snap_rec;   /* record.c */

struct snap_agent {
    cdp_browser *b;
    cdp_conn *c;
    snap_opts o;
    snap_rec *rec;               /* recording facts (record.c); NULL: off */
    snap_tab *tabs;
    size_t ntabs, captabs;
    int cur;                     /* current tab id, 0 when none */
    int next_tab;
    snap_ref *refs;              /* refs[n-1] is "e<n>" */
    size_t nrefs, caprefs;
    uint32_t *ref_hash;          /* open addressing: (doc, backend) -> n */
    size_t ref_hash_cap;
    snap_refdoc *refdocs;        /* the documents refs were issued in */
    size_t nrefdocs, caprefdocs, refdoc_last;
    char (*ref_roles)[32];       /* the roles refs were issued with */
    size_t nref_roles, capref_roles;
    snap_obs_rec *obs;           /* recent observations (ring) */
    size_t nobs, capobs;
    uint32_t next_obs;
    char nonce[17];              /* per-agent random hex nonce for content markers */
    /* agent.c: work queued by the event listener for snap_sync (popups to
     * adopt, out-of-process iframe sessions to set up). */
    struct snap_work {
        int kind;                /* 1 popup target, 2 OOPIF session */
        char target[SNAP_ID_MAX];
        char session[SNAP_ID_MAX];
        char opener[SNAP_ID_MAX];
        int tab;
    } work[64];
    size_t nwork;
    /* agent.c: targets no tab accounts for (shared and service workers,
     * worklets...) and their browser context, so that sink.c judges their
     * requests as that context's (a ring: one forgotten is unknown, and an
     * unknown one counts as authenticated, fail closed). */
    struct snap_other {
        char target[SNAP_ID_MAX];
        char ctx[SNAP_ID_MAX];   /* browserContextId */
    } others[32];
    size_t nothers;
    /* session.c: browser contexts and the login handoff. */
    snap_ctx *ctxs;              /* ctxs[0]: untrusted, once nctxs > 0 */
    size_t nctxs, capctxs;
    bool ctx_shared;             /* untrusted = the default context (refused) */
    bool ctx_shared_told;
    struct {
        bool active;
        int tab;
        size_t ctx;
        bool takeover;           /* the person's sign-in for a takeover stop
                                    (handback.c), not a login handoff */
        int from_tab;            /* then: the agent's tab it was started from */
        size_t ncookies, nls;    /* what the last finished login saved */
        bool saved;              /* it is in the vault (snap_login_saved) */
    } login;
    /* sink.c and policy.c: the gate, the permit of the action in progress,
     * requests refused at the network level (a ring). */
    gate *gate;
    bool gate_owned;
    /* agent.c: fields that were ever secret (snap_secret_note), a ring. */
    struct snap_secret {
        uint32_t doc;            /* a->refdocs[doc] */
        int32_t backend;
        unsigned kind;           /* SNAP_SECRET_* */
    } *secrets;
    size_t nsecrets, next_secret;
    char permit[SNAP_PERMIT_MAX]; /* tool name; "" = none */
    /* The axe-core source a running accessibility scan registered with the
     * sink (axe_run.c; borrowed for the scan, NULL otherwise). */
    const char *axe_src;
    size_t axe_len;
    char nav_note[600];          /* act_result.c: snap_nav_note at an action's start */
    /* act.c: the names of the fields that are or ever were secret in the
     * form of the latest action (set before its input, cleared when the
     * next action begins): every URL recorded or audited meanwhile hides
     * their values (snap_url_redact_act). */
    char act_secret[8][64];
    size_t nact_secret;
    snap_blocked blocked[SNAP_BLOCKED_MAX];
    uint64_t nblocked;
    /* How many of them a result has told: a refusal made while the agent
     * was idle (no action in flight: a page timer, snap_idle) is told in
     * its next result (red team s13, N3). */
    uint64_t blocked_told;
    /* scrub.c: keyed hashes of the session values restored or captured. */
    snap_scrub *scrub;
    /* secval.c: keyed hashes of the values of secret fields, per document. */
    snap_secval *secval;
    /* signin.c: sites signed in in the untrusted context (R8-6 b; NULL
     * until a request there looked like a sign-in). */
    snap_signin *signin;
    /* sink.c: requests of authenticated contexts waiting for the human;
     * the action in progress the human confirmed (its requests are covered
     * by that confirmation while it runs). */
    snap_ask asks[SNAP_ASK_MAX];
    size_t nasks;
    bool asking;                 /* snap_sink_asks is running the hook */
    int64_t asked_ms;            /* time spent asking, in total (waits add it) */
    int covered_tab;             /* tab of the confirmed action in progress; 0: none */
    int64_t covered_until;       /* base_now_ms() the cover ends: 0 while the action
                                    runs; its settling sets it GATE_COVER_MS ahead */
    int covered_cls;             /* its GATE_CLASS_* */
    /* sink_body.c: what the human was shown of that action's form (its
     * read-back; NULL: none), kept while the cover lasts. */
    gate_present *cover_shown;
    size_t ncover_shown;
    bool cover_oom;              /* it could not be kept: the cover passes no field */
    /* The address the human was shown for it (a link's href, a form's
     * action; NULL: none) and the requests the cover let through (a
     * redirect hop of one is theirs too): only these pass a consequential
     * GET under the cover (red team s12, G9b's second half). */
    char *cover_url;
    bool cover_url_path;         /* a GET form's: the query is the fields' */
    bool cover_addr;             /* the action showed an address (cover_url: NULL
                                    when it could not be kept: none passes) */
    bool cover_post;             /* ... a POST form's: the one that takes data */
    bool cover_nav;              /* ... where it goes itself (a link, a form it
                                    submits), not a form it is in: a GET there
                                    passes (snap_cover_shown_url) */
    char cover_rid[4][SNAP_ID_MAX];
    unsigned ncover_rid;
    /* sink.c and agent_wait.c: a request that starts before own_until
     * (base_now_ms()) is an action's own (see snap_req); input_ms: when
     * the sink last let a state-changing command or page script out (a
     * settle waits only for own requests started since). */
    int64_t own_until;
    int64_t input_ms;
    /* sink.c: state-changing commands and page scripts let out (a cached
     * snapshot built before the last one is not reused); observe_cache.c:
     * snapshots built (the tests read it). */
    uint64_t changes;
    uint64_t builds;
    uint64_t walks;              /* observe_walk.c: builds read by the walker */
    uint64_t walk_ax_nodes;      /* ...and AX nodes read for its unsure records */
    /* download.c: the downloads of the agent's actions (a ring of
     * SNAP_DL_MAX, ndls in all) and the directory they are saved in (NULL:
     * downloads are denied). */
    snap_download dls[SNAP_DL_MAX];
    size_t ndls;
    char *dl_dir;
    bool dl_decided;
    bool dl_syncing;             /* snap_dl_sync is running (no re-entry) */
    bool dl_ungoverned;          /* a context's behaviour was refused (R2) */
    bool dl_ungoverned_told;
    int dl_act_tab;              /* an allowed action runs on this tab (0: none) */
    int64_t dl_act_since;        /* base_now_ms() it was allowed */
    int dl_expect_tab;           /* a download is expected on this tab (0: none) */
    int64_t dl_expect_until;     /* base_now_ms() until which it is waited for */
    char dl_expect_url[256];     /* the attachment's URL (cut) and type, when known */
    char dl_expect_mime[64];
    /* The URLs the allowed action's target implies a download from (its
     * link's href, its form's action, the URL opened; new, no fragment),
     * and where they redirected: only a download from one of them is the
     * action's; form: compared up to the query (a GET form adds it). */
    struct {
        char *url;
        bool form;
    } dl_want[SNAP_DL_WANT_MAX];
    size_t ndl_want;
    snap_dl_page dl_cancel[SNAP_DL_CANCEL_MAX];   /* page-started, to cancel */
    size_t ndl_cancel;
    size_t dl_cancel_lost;       /* more than the queue held (their files stay inert) */
    size_t dl_page_told;         /* canceled page downloads not yet told (count) */
    char dl_page_name[SNAP_DL_NAME_MAX];    /* the first of them */
    int dl_files;                /* saved this task (SNAP_DL_TASK_FILES) */
    int64_t dl_bytes;            /* and their bytes (SNAP_DL_TASK_BYTES) */
    bool dl_cap_told;
};

/* ---- sink.c: the one path to the browser ---- */

/* The only senders of CDP commands in snapshot/ (see sink.c). They refuse
 * a state-changing method without a permit for it, and any page script
 * that is not one of the registered scripts below. */
int snap_cdp_send(snap_agent *a, const char *session, const char *method, const char *params,
                  uint64_t *id, cdp_err *e);
int snap_cdp_send_sink(snap_agent *a, const char *session, const char *method,
                       const char *params, cdp_sink_fn fn, void *ud, uint64_t *id,
                       cdp_err *e);
int snap_cdp_call(snap_agent *a, const char *session, const char *method, const char *params,
                  int timeout_ms, cdp_reply *out, cdp_err *e);
/* The same for calls whose params or reply carry session values (cookies,
 * localStorage): cdp_call_secret, and the sink's own parse is wiped too. */
int snap_cdp_call_secret(snap_agent *a, const char *session, const char *method,
                         const char *params, int timeout_ms, cdp_reply *out, cdp_err *e);
/* cdp_send_secret through the sink (the person's input: human.c). */
int snap_cdp_send_secret(snap_agent *a, const char *session, const char *method,
                         const char *params, uint64_t *id, cdp_err *e);
/* Permits: tool is a sink permit name (open, click, type, select, press,
 * scroll, back, tabs, dialog, login, restore, teardown, eval, upload,
 * screenshot). Set only after the gate allowed the action (policy.c) or for
 * the agent's own housekeeping; cleared at the end of the action. "human"
 * (human.c) is the person's input from the live view: it permits the Input
 * methods only while the gate's control mode is human. */
void snap_permit_begin(snap_agent *a, const char *tool);
void snap_permit_end(snap_agent *a);
/* The agent's own housekeeping inside whatever action runs: the permit
 * held so far copied into saved, then tool's begun. The caller puts it
 * back with snap_permit_begin(a, saved). */
void snap_permit_push(snap_agent *a, const char *tool, char saved[SNAP_PERMIT_MAX]);

/* Page scripts compiled into the binary (page_js.c, page_walk.c), listed in
 * page_js.c's table snap_page_scripts (ended by {NULL}); src is the whole
 * expression or function, or with suffix a template: src, a JSON value
 * (data), suffix. SNAP_JS_WRITE: the script changes the page.
 * SNAP_JS_SCROLL (with WRITE): it only scrolls, so a cached snapshot stays
 * valid (its boxes are in document coordinates, and what the page's scroll
 * handlers change, the mutation counter sees: observe_cache.c). */
/* SNAP_JS_A11Y: the accessibility scan's scripts (axe_run.c), which call
 * the user-installed axe-core: only under the scan's permit (a11y_scan). */
enum { SNAP_JS_READ = 0, SNAP_JS_WRITE = 1, SNAP_JS_SCROLL = 2, SNAP_JS_A11Y = 4 };
typedef struct {
    const char *src;
    const char *suffix;
    unsigned flags;
} snap_js;
/* Every page script, in page_js.c (read them there). */
extern const snap_js snap_page_scripts[];
/* The accessibility scan's scripts, in axe_run.c (SNAP_JS_A11Y). */
extern const snap_js snap_axe_scripts[];

/* With a grant: intercept every request of the browser (Fetch at the
 * browser level) so that the page's own navigations, popups, redirects and
 * posts are judged before they leave. */
int snap_sink_intercept(snap_agent *a, cdp_err *e);
/* Whether a is the last agent listening on its connection (agent.c). */
bool snap_listener_last(const snap_agent *a);
/* Fetch.requestPaused on the browser session (called by the listener). */
void snap_sink_paused(snap_agent *a, const json_val *params);
/* Network.webSocketCreated (called by the listener): a WebSocket of a
 * privileged context to a host outside the grant, which the context's
 * network rule refused, is audited and reported. */
void snap_sink_socket(snap_agent *a, const char *session, const json_val *params);
/* Whether tab t's context is privileged (holds a service's session). */
bool snap_sink_privileged(const snap_agent *a, const snap_tab *t);
/* Target.createBrowserContext params for a privileged context (new; NULL
 * when out of memory): its network rule, see sink.c. */
char *snap_sink_context_params(const snap_agent *a);
/* Ask the human (the gate's hook) about the queued requests of
 * authenticated contexts and answer them: one pass answers those queued
 * when it began (what the page queues meanwhile waits for the next pass).
 * Not re-entered: a call made while the hook runs returns at once. Called
 * by snap_sync and snap_idle. */
void snap_sink_asks(snap_agent *a);
/* At agent free: refuse what still waits, free the queue. */
void snap_sink_free(snap_agent *a);
/* sink.c: the header value named name (case-insensitive) of a Fetch
 * request object, or NULL (sink_body.c reads Content-Type with it). */
const char *snap_request_header(const json_val *req, const char *name);

/* sink_body.c: keep what the human was shown of a confirmed action's form
 * (copied; n 0: none) while its cover lasts (out of memory: cover_oom, and
 * snap_cover_check refuses); drop it.
 * snap_cover_check: the query of url and the body of req (a request the
 * cover would pass) checked field by field (gate_check_sent_field): 0, or
 * -1 with why (cap), never a value but a refused address. */
void snap_cover_keep(snap_agent *a, const gate_present *p, size_t n);
void snap_cover_drop(snap_agent *a);
/* snap_cover_target: keep the address the human was shown for the
 * confirmed action tg (a link's href, the form it submits or is in; none)
 * while the cover lasts. snap_cover_shown_url: whether a request (its URL,
 * and the Fetch id of the request whose redirect it follows, NULL: none)
 * is the href or a form the action submits, or a redirect hop of one the
 * cover let through (snap_cover_passed). snap_cover_data_other: whether a
 * request that carries data (method, url; document: a navigation, a form
 * the page submits) goes elsewhere than the action showed (red team s19,
 * s20: R9-1): not covered. */
void snap_cover_target(snap_agent *a, const gate_target *tg);
bool snap_cover_shown_url(const snap_agent *a, const char *url, const char *redirected_from);
bool snap_cover_data_other(const snap_agent *a, const char *method, const char *url,
                           bool document);
void snap_cover_passed(snap_agent *a, const char *rid);
int snap_cover_check(snap_agent *a, const json_val *req, const char *url, char *why, size_t cap);
/* Outside a cover, a data-carrying request of a session-holding context to
 * its service: the recipient part of snap_cover_check (an address in any
 * field, the path or a text body; any value of a field named To, Cc,
 * payee, ...) against the grant's recipients (red team s14, R4-13): -1
 * with why when one is not granted (refused, never asked); 0 otherwise,
 * a body it cannot read included (the human is asked, as before). */
int snap_sent_recipients(snap_agent *a, const json_val *req, const char *url, char *why,
                         size_t cap);
/* What a human asked about such a request is shown of its values (red
 * team s14, R4-13 residual): its recipients and amounts as the readers
 * above read them (gate_sent_field_shown; never a secret-named field), in
 * gate_auth_request.values' form (name 0x1F value 0x1E ...; a control in
 * either a space). New (free()); "" when none; NULL when out of memory. */
char *snap_sent_values(snap_agent *a, const json_val *req, const char *url);
/* The names of a request body's fields (never values) into out, "a, b,
 * ...": form encoded, multipart, a JSON object's keys; another body: "". */
void snap_body_fields(const json_val *req, char *out, size_t cap);
/* Append "blocked before it left: URL (reason)" for the requests refused
 * since the count since (a->nblocked before the action) on tab tab_id. */
void snap_blocked_describe(snap_agent *a, uint64_t since, int tab_id, char *buf, size_t cap);

/* ---- policy.c: asking the gate ---- */

typedef struct {
    const char *tool;            /* gate tool name: click, type, open, ... */
    const char *permit;          /* sink permit when not the tool's own name */
    int tab;                     /* tab acted on (0 for open in a new tab) */
    const char *frame;           /* element's frame id, NULL = main frame */
    const char *session;         /* element's session and Runtime object, */
    const char *oid;             /* NULL for page-level actions */
    const json_val *facts;       /* the element's facts when already read (the
                                    value of snap_gate_facts_params' call,
                                    pipelined with the action's own checks) */
    uint32_t ref_n;              /* the element's ref number (role and name) */
    const char *open_url;        /* open: the URL to open */
    bool authenticated;          /* open: the context picked for it is */
    bool state_change;
    bool submit;                 /* type with submit, press Enter in a form */
    const char *text;            /* type: the text (shown to the human who
                                    confirms, checked as a recipient in a
                                    recipient field; never for a secret field) */
    const char *key;             /* press: the key (shown) */
    bool dbl;                    /* click: a double click (gate_request.dbl) */
    const char *const *options;  /* select: the options chosen (shown, checked
                                    as recipients in a recipient field) */
    size_t noptions;
    const char *const *chosen;   /* select: the options they pick (page text) */
    const char *const *chosen_values;
    size_t nchosen;
    const char *dialog;          /* dialog accept: its message */
    const char *dialog_url;      /* and the URL of the frame that opened it
                                    (redacted; NULL unknown): its origin is
                                    shown to the human */
    const char *file;            /* upload: the resolved path of the file */
    const char *file_given;      /* upload: the path as the agent wrote it */
    const char *script;          /* eval: the expression */
    unsigned egress;             /* GATE_EGRESS_* the action needs */
    const char *obs;
    uint64_t epoch;              /* stamped by the caller; 0 = current */
} snap_gate_in;

typedef struct {
    gate_decision d;
    bool allowed;                /* permit held until snap_gate_done */
    bool audit_outcome;          /* consequential or confirmed */
    uint64_t blocked0;
    /* A confirmed action (d.confirmed): the element's facts as the human
     * was shown them (JSON text, new; NULL for page-level actions), and
     * what changed meanwhile when the action was called off (audited as
     * the outcome's detail). */
    char *facts;
    char changed[400];
    /* Allowed, on a node that acts on another element (a label's text for
     * its control): that element in cdpgate's world of the node's session,
     * for the change report; released by snap_gate_done. "" none. */
    char acted_oid[SNAP_ID_MAX];
    char acted_session[SNAP_ID_MAX];
} snap_gated;

/* Runtime.callFunctionOn params reading what the gate needs of the element
 * oid (new; NULL when out of memory). */
char *snap_gate_facts_params(const char *oid);
/* Ask the gate; 0 with the sink permit for the tool set, or a SNAP_E*
 * code (SNAP_EDENIED, SNAP_ESTOP, SNAP_ETAKEOVER, SNAP_ESTALE) with r
 * holding a structured refusal. */
int snap_gate_ask(snap_agent *a, const snap_gate_in *in, snap_gated *g, snap_result *r);
/* The action ended with rc (r, may be NULL, gets the network refusals and
 * an "outcome unknown" note): clear the permit, audit the outcome (with
 * g->changed as its detail when set). Frees g->facts. */
void snap_gate_done(snap_agent *a, snap_gated *g, int rc, snap_result *r);
/* After a confirmed decision, before anything is sent: read the element's
 * facts again (oid in session) and compare them with what the human was
 * shown. 0 when the same; SNAP_ESTALE with what differs in why (cap
 * bytes: the name of the fact, never a value typed by anyone), or
 * SNAP_EBROWSER when they cannot be read. */
int snap_gate_facts_same(snap_agent *a, const snap_gated *g, const char *session,
                         const char *oid, char *why, size_t cap);

/* ---- agent.c ---- */

/* Fill r: code, text (printf-style), and a minimal structured object
 * {"ok":bool,"error":code-name,"message":text}. Returns code. */
int snap_fail(snap_result *r, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The same with the text as it is (copied, whole). */
int snap_fail_text(snap_result *r, int code, const char *text);
/* A result's structured object, begun in w: {"ok":code == 0 and, for a
 * failure, "error":code-name; the caller adds its members, then
 * snap_result_set closes it and makes it r->structured (the old one freed;
 * when out of memory r->structured stays as it was). */
void snap_result_begin(json_w *w, int code);
void snap_result_set(json_w *w, snap_result *r);
/* The one writer of page-derived text into what the model reads
 * (observe_tree.c; the rules are there): whitespace collapsed, controls
 * made spaces, markers never spelled, characters the gate never shows raw
 * escaped; at most max bytes of s[0..n), "…" when cut (returns true). */
enum { PAGE_QUOTED = 1, PAGE_KEEP_NL = 2 };
bool snap_obs_put_page(base_buf *b, const char *s, size_t n, size_t max, unsigned mode);
/* snap_json_page (snapshot.h): every structured string that came from a
 * page goes through it. */
/* A page-derived JSON value (an eval result) the same way: every string,
 * keys included, through snap_json_page's escaping. */
void snap_json_page_val(json_w *w, const json_val *v);
snap_tab *snap_tab_by_id(snap_agent *a, int id);
snap_tab *snap_tab_current(snap_agent *a);     /* NULL when no open tab */
/* The open tabs' titles from the browser (Target.getTargets; act_page.c):
 * a popup adopted after its title changed missed that event. */
void snap_tab_titles(snap_agent *a);
snap_tab *snap_tab_by_session(snap_agent *a, const char *session);
snap_frame *snap_frame_find(snap_tab *t, const char *frame_id);
/* The browserContextId of a target no tab accounts for (a shared or service
 * worker: the frameId of its paused requests), or NULL when not known. */
const char *snap_other_ctx(const snap_agent *a, const char *target);
/* A cdp_wait_event match for Page.lifecycleEvent: the "load" of the frame
 * named in ud (a snap_load_match). */
typedef struct {
    const char *frame;
} snap_load_match;
bool snap_is_load(void *ud, const json_val *p);
/* snap_open without the choice of context: navigate in the current tab when
 * it is in ctxs[ctx] (and !new_tab), else in a new tab there. */
int snap_open_in(snap_agent *a, const char *url, size_t ctx, bool new_tab, snap_result *r);

/* The ref for a node, issuing a new one if this (tab, frame, document,
 * backend node) has none. Returns n (> 0) or 0 on allocation failure. */
uint32_t snap_ref_for(snap_agent *a, int tab, const char *frame, const char *loader,
                      int backend, const char *role, const char *name);
/* A text target (observe_find.c): the ref ("e12", into ref) of the one
 * line of tab's observation that text names (see there), issuing it; 0, or
 * SNAP_ENOREF (no such text) or SNAP_EINVAL (several: r lists them). */
int snap_text_target(snap_agent *a, int tab, const char *text, char ref[16], snap_result *r);
/* What an action brought into view: snap_controls_now, before it, takes
 * the identities of the actionable lines of the tab's cached snapshot (when
 * it is of the current document and has at most max_lines lines; else
 * NULL); snap_controls_new, after it, rebuilds the tab's snapshot and
 * returns the actionable lines it has
 * that were not there, rendered with their refs, at most max and a count
 * of the rest (new string; NULL for none). */
uint64_t *snap_controls_now(const snap_tab *t, size_t max_lines, size_t *n);
char *snap_controls_new(snap_agent *a, snap_tab *t, const uint64_t *before, size_t nbefore,
                        size_t max);
/* Fields that were ever secret. A text field that was a password
 * (SNAP_SECRET_PW), carried an autocomplete hint for a one-time code or a
 * current or new password (SNAP_SECRET_OTC) or for a payment card (cc-*:
 * SNAP_SECRET_CC) stays secret for the life of its node (tab, frame,
 * document, backend node), whatever the page makes of it later (a "show
 * password" toggle sets type=text): observe_*.c notes every secret field it
 * sees and withholds the values of the ones noted; the gate treats a noted
 * password or one-time-code field as a credential (policy.c). At most
 * SNAP_SECRETS_MAX are remembered (then the oldest goes). */
enum { SNAP_SECRET_PW = 1, SNAP_SECRET_OTC = 2, SNAP_SECRET_CC = 4 };
#define SNAP_SECRETS_MAX 4096
void snap_secret_note(snap_agent *a, int tab, const char *frame, const char *loader,
                      int backend, unsigned kind);
/* The kinds noted for a node (0: never secret), by document or by ref. */
/* The index of document (tab, frame, loader) in a->refdocs (add: made
 * when not there), or -1. */
long snap_refdoc_ix(snap_agent *a, int tab, const char *frame, const char *loader, bool add);
unsigned snap_secret_kind(const snap_agent *a, int tab, const char *frame, const char *loader,
                          int backend);
unsigned snap_secret_of_ref(const snap_agent *a, const snap_ref *rf);
/* The backend node ids of the fields noted secret in a document, at most
 * max into out; their number. */
size_t snap_secret_list(const snap_agent *a, int tab, const char *frame, const char *loader,
                        int *out, size_t max);
/* The backend node ids of every element the snapshot's rules call secret
 * (observe_dom.c) in every document of a session, closed shadow roots
 * included, read from a DOM snapshot taken now (observe_dom.c): new in
 * *ids (free), their number in *n. 0, or -1 (the snapshot failed: the
 * caller fails closed). */
int snap_dom_secret_ids(snap_agent *a, const char *session, int **ids, size_t *n);

/* What a ref was issued for: its tab, frame id and role. */
int snap_ref_tab(const snap_agent *a, const snap_ref *rf);
const char *snap_ref_frame(const snap_agent *a, const snap_ref *rf);
const char *snap_ref_role(const snap_agent *a, const snap_ref *rf);
/* A ref resolved for acting: fails closed with what changed. */
/* ref, tab and frame point into arrays that the event listener may grow:
 * valid only until the next call that reads from the browser. The ids are
 * copies and stay valid. */
typedef struct {
    snap_ref *ref;
    snap_tab *tab;
    snap_frame *frame;
    int tab_id;
    char session[SNAP_ID_MAX];   /* session of the node's frame */
    char object_id[SNAP_ID_MAX]; /* Runtime remote object of the node (DOM.resolveNode),
                                    in cdpgate's isolated world of its frame */
    int64_t world;               /* that world's execution context id */
    int backend;                 /* the node's backendNodeId (a walker ref's:
                                    DOM.describeNode of its element) */
    uint32_t n;                  /* the ref's number */
    uint64_t conn_id;            /* the check that the node is in the document,
                                    sent and not yet read (0: none) */
    bool ax_pending;             /* a walker ref's AX node asked for, not yet
                                    read: backend is set by the check */
    uint64_t ax_ids[2];          /* its DOM.describeNode and
                                    Accessibility.getPartialAXTree (0: not sent) */
    unsigned kind;               /* the secret kinds the walker saw on it */
} snap_resolved;
int snap_ref_resolve(snap_agent *a, const char *ref, snap_resolved *out, snap_result *r);
/* The checks of snap_ref_resolve that need no call to the browser: the ref
 * parses, was issued, and its tab, frame and document are still there. 0
 * with *out (in a->refs: valid until the next ref is issued), or a failure
 * in r saying what changed. */
int snap_ref_doc(snap_agent *a, const char *ref, snap_ref **out, snap_result *r);
/* role "name" of a ref for messages (page text, escaped; at most 512 bytes). */
void snap_ref_what(const snap_agent *a, const snap_ref *rf, char *buf, size_t cap);
/* snap_ref_resolve in two steps, so that read-only calls on the node can
 * go in the same round trip as the check that it is still in the
 * document: _start resolves it and sends the check (out->ref, tab and
 * frame not set yet); _check reads the check (fails closed with the
 * object released) and sets them. A caller that fails between releases
 * the object and forgets conn_id (cdp_forget). */
int snap_ref_resolve_start(snap_agent *a, const char *ref, snap_resolved *out, snap_result *r);
int snap_ref_resolve_check(snap_agent *a, snap_resolved *out, snap_result *r);
/* Release what resolve took (the remote object). */
void snap_resolved_release(snap_agent *a, snap_resolved *res);
/* cdpgate's isolated world (Page.createIsolatedWorld "cdpgate") in frame
 * frame_id of tab tab_id: one per frame and document, made on first use
 * and made again when the frame has a new document or session, or when
 * its context was found gone (snap_ref_resolve). The page's scripts cannot reach it: the
 * prototypes and builtins there are the browser's own. Returns its
 * execution context id, 0 when it cannot be made (callers fail closed). */
int64_t snap_frame_world(snap_agent *a, int tab_id, const char *frame_id);
/* The fields of walker ids ids[0..n) (n <= 64) in frame frame_id of tab
 * tab_id, which the walker marked secret: their backend nodes and the
 * secret kinds it saw (snap_js_walk_sec_fn) noted with snap_secret_note,
 * under the backend node and the walker id (negated). 0, or -1 when one
 * could not be (the caller does not use the walker's view). */
/* Ref e<n>'s element in a view's numbering (a view from a ref, when the ref
 * was issued by a view of the other kind): walker true, the walker's id for
 * it, negated (an AX ref's element looked up in the isolated world); false,
 * its backend node (a walker ref resolved). 0 when it has none (stale, not
 * walked, a failure). */
int snap_ref_node_as(snap_agent *a, uint32_t n, bool walker);
int snap_walk_secrets(snap_agent *a, int tab_id, const char *frame_id, const int *ids,
                      size_t n);
/* The walker's per-node fallback (observe_walk.c): the AX nodes of walker
 * ids ids[0..n) (1 <= n <= SNAP_WALK_AX_MAX) in frame frame_id of tab
 * tab_id, each read with Accessibility.getPartialAXTree (no relatives) on
 * its element, pipelined; fn(ud, i, node) for each, in order, while the
 * replies are alive. Only when every element is still in the document,
 * has an AX node that is not ignored, and no node's name holds the value
 * of a secret field (snap_js_walk_leak_fn). 0, or -1 (nothing was handed
 * to fn, or fn failed: the caller reads the whole AX tree). */
#define SNAP_WALK_AX_MAX 64
typedef int (*snap_walk_ax_fn)(void *ud, size_t i, const json_val *node);
int snap_walk_ax_nodes(snap_agent *a, int tab_id, const char *frame_id, const int *ids,
                       size_t n, snap_walk_ax_fn fn, void *ud);
/* Send Runtime.evaluate of a compiled-in expression in isolated world
 * `world` (returnByValue) on session, not waited for: *id for cdp_wait.
 * 0, or an error (*id = 0). */
char *snap_world_eval_params(int64_t world, const char *expr);
int snap_world_eval(snap_agent *a, const char *session, int64_t world, const char *expr,
                    uint64_t *id);
/* Forget frame_id's world: its context was found gone (a caller that
 * then asks snap_frame_world again gets a new one). */
void snap_frame_world_forget(snap_agent *a, int tab_id, const char *frame_id);
/* The warm cache's mutation counters (page_js.c snap_js_mut_expr) of the
 * n frames ids[] of tab tab_id (n <= 64), read in cdpgate's isolated
 * world with one pipelined Runtime.evaluate per frame: out[i] is the
 * frame document's count of changes, -1 when the counter was installed
 * by this very call (a new document or world), -2 when it could not be
 * read. 0 when every frame was read, -1 otherwise (the caller rebuilds:
 * fail safe). */
int snap_frame_mut_read(snap_agent *a, int tab_id, size_t n, const char (*ids)[SNAP_ID_MAX],
                        int64_t *out);

/* Issue an observation id for the tab; writes "o<n>" into out[16]. */
void snap_obs_issue(snap_agent *a, snap_tab *t, char out[16]);
/* When tab t has a new main document since the agent's last observation
 * of it (the page navigated by itself: a timer, a script, a refresh),
 * writes a line saying so (its URL) into buf, else "". For the top of the
 * next result, read before the call's own actions. */
void snap_nav_note(snap_agent *a, snap_tab *t, char *buf, size_t cap);
/* 0 if obs (may be NULL/"") is still valid, else SNAP_ESTALE with r filled. */
int snap_obs_check(snap_agent *a, const char *obs, snap_result *r);

/* Process what arrived: pump ready messages, adopt popups, set up new
 * out-of-process iframe sessions. 0 or SNAP_EBROWSER when the browser is gone. */
int snap_sync(snap_agent *a);
/* The bound on one reply of a snapshot's reads (the DOM snapshot, the
 * accessibility tree, the walker's script): SNAP_READ_FACTOR times the
 * per-action timeout (60 s by default). A read has no outcome to lose, and
 * CDP cannot cancel one: given up on, it keeps the renderer busy and the
 * next call waits behind it, so the bound only gives up on a renderer that
 * will not answer; what a page's size and the machine's load cost, it
 * waits for (docs/snapshot.md, "Deadlines"). */
#define SNAP_READ_FACTOR 4
int snap_read_timeout(const snap_agent *a);
/* Mark (on) or clear the frames of session in tab tab_id as not answering
 * (snap_frame.mute); cleared, the session is set up again at the next
 * snap_sync (its set-up may have been cut short). */
void snap_session_mute(snap_agent *a, int tab_id, const char *session, bool on);

/* Wait for the consequences of an action on tab t: a navigation (to its
 * load, following script and meta redirects), the action's own network
 * requests (snap_req: until answered), a dialog (returns at once), a popup
 * (adopted as a new tab). Requests that are not the action's own (polls,
 * long polls, beacons, streams) never hold it. Event-driven with a short
 * quiet window, ended by the settle cap (SNAP_SETTLE_CAP_MS after the
 * input or the last load) and bounded by deadline_ms (monotonic). Fills
 * *out, with the requests still pending. */
/* ---- download.c: downloads (issue 13, point 6d) ---- */

/* The page-suggested name s as it may be shown and saved: letters, digits
 * and ".-_+()," kept, any other run one '_', no leading '.', at most
 * SNAP_DL_NAME_MAX - 1 bytes, "download" when nothing is left. */
void snap_dl_name_clean(const char *s, char out[SNAP_DL_NAME_MAX]);
/* Set the download behaviour of a new browser context (ctx_id ""/NULL:
 * the default one): allowAndName into the agent's download directory
 * (made on first use, 0700, inside the grant's first usable file scope)
 * when the grant has egress file_transfer and a file scope, else deny;
 * events on either way. A refusal marks the agent's downloads ungoverned
 * (audited, told once; each page session then gets snap_dl_page_deny). */
void snap_dl_context(snap_agent *a, const char *ctx_id);
/* After a refusal of snap_dl_context: Page.setDownloadBehavior deny on a
 * page session (the browser honours it for that page). */
void snap_dl_page_deny(snap_agent *a, const char *session);
/* Browser.downloadWillBegin / downloadProgress (the browser session). The
 * listener's: records only, never waits. A download begun while no
 * allowed action of the agent runs on its tab (or a popup of it) is queued
 * to be canceled; one begun in such an action waits for the gate. */
void snap_dl_event(snap_agent *a, const char *method, const json_val *p);
/* From snap_sync: cancel (Browser.cancelDownload) and audit the queued
 * page-started downloads and their files; ask the gate about each of the
 * actions' downloads not decided yet (tool "download", egress
 * file_transfer, the file; confirmed by the hook on an authenticated
 * origin) and cancel the refused ones; cancel one past the task's byte
 * cap. */
void snap_dl_sync(snap_agent *a);
/* An action the gate allowed runs on tab (its downloads are its own);
 * snap_dl_act_end: it has settled (no download is its own any more, nor
 * expected). */
void snap_dl_act(snap_agent *a, int tab);
void snap_dl_act_end(snap_agent *a);
/* The allowed action's target implies a download from url (a link's href;
 * form: a form's action, compared up to the query): a download that begins
 * during its settle is the action's only when its URL is one of these (or
 * a redirect of one, snap_dl_redirect); any other is the page's, asked of
 * the gate as a page download (red team s11, S10). Cleared by
 * snap_dl_act_end. */
void snap_dl_want(snap_agent *a, const char *url, bool form);
/* A request of tab was redirected from one URL to another (the listener's:
 * records only): when from is one the action implies, to is too. */
void snap_dl_redirect(snap_agent *a, int tab, const char *from, const char *to);
/* Appended to b (a newline first unless b is empty): the downloads the
 * page started on its own since the last time, canceled, their name as
 * page content; and once, that downloads are ungoverned (R2) or that the
 * task's cap was reached. Nothing when there is nothing to tell. */
void snap_dl_tell(snap_agent *a, base_buf *b);
/* An action on tab is expected to start a download (it clicks a link with
 * a download attribute; snap_dl_response: its own request was answered,
 * response a Network.Response, with "Content-Disposition: attachment",
 * whose mimeType the download then reports): a settle waits for the
 * download to begin, within its cap. */
void snap_dl_expect(snap_agent *a, int tab);
void snap_dl_response(snap_agent *a, int tab, const json_val *response);
/* An open whose navigation (Page.navigate's reply rep, freed here) turned
 * out to be a download on tab: waits (until deadline_ms) for the download
 * begun since since_ms to end and fails r with SNAP_ENAVIGATE saying that
 * url is a download, not a page, and what became of it. */
int snap_dl_open(snap_agent *a, int tab, int64_t since_ms, int64_t deadline_ms, const char *url,
                 cdp_reply *rep, snap_result *r);
/* Removes the download directory when nothing was saved in it. */
void snap_dl_free(snap_agent *a);

/* ---- record.c (issue 14: what replay/ records of an action) ---- */

/* What snap_gate_ask knows of an action it allowed, before it is sent. */
typedef struct {
    const char *tool;
    int cls;                     /* GATE_CLASS_* */
    unsigned egress;             /* GATE_EGRESS_* */
    const char *origin, *url;    /* as the gate saw them (url redacted) */
    snap_tab *tab;               /* NULL for open in a new tab */
    const char *frame;           /* the element's frame id (NULL: the top) */
    bool authenticated;
    const char *service;         /* the service whose session the tab holds */
    const gate_target *target;   /* NULL for page-level actions */
    bool secret;                 /* the target is or was a secret field */
    const char *frame_origin;    /* its frame's origin when not the top one
                                    (NULL: found from frame) */
    const char *session, *oid;   /* the element acted on, for its attributes */
} snap_rec_in;
/* Keep in's facts (and read the element's stable attributes) as the last
 * step's, when recording is on; nothing otherwise. */
void snap_rec_capture(snap_agent *a, const snap_rec_in *in);
void snap_rec_free(snap_rec *rc);

#define SNAP_SETTLE_CAP_MS 3000
typedef struct {
    bool navigated;              /* the main frame has a new document */
    bool dialog;                 /* a JS dialog is open on t */
    int new_tabs[8];             /* tabs opened meanwhile (popups) */
    int nnew;
    bool closed;                 /* t was closed (e.g. window.close()) */
    bool timed_out;              /* the deadline passed while still busy */
    bool in_page;                /* the main frame moved within its document
                                    (set by snap_act_finish from tab->inpage) */
    bool capped;                 /* the settle cap ended the wait while an own
                                    request was still out (snap_settle) */
    /* Requests of t still in flight when the wait ended: npending in all,
     * the first four described (url cut at '?' or '#': never a query
     * value), own ones first. */
    size_t npending;
    struct {
        char method[8];
        char type[20];
        char url[200];
        bool own;
    } pending[4];
    /* Downloads tab t started since the action's input: ndls in all, the
     * first four copied (download.c). */
    int ndls;
    snap_download dls[4];
} snap_settled;
int snap_settle(snap_agent *a, snap_tab *t, uint64_t since_nav, size_t tabs_before,
                int64_t deadline_ms, snap_settled *out);
/* The same after input whose page has been asked to report its next frame:
 * frame_call is an awaited Runtime.evaluate that resolves once the page has
 * run a frame's animation callbacks and a task after them (0: none). While
 * nothing has happened on the tab, the wait ends as soon as that frame is
 * in and nothing happened for a short window; once anything happens, the
 * usual window applies. The call is forgotten if it is still out. */
int snap_settle_frame(snap_agent *a, snap_tab *t, uint64_t since_nav, size_t tabs_before,
                      int64_t deadline_ms, uint64_t frame_call, snap_settled *out);
/* (act_result.c) Describe a settle outcome in one line for result texts
 * ("the tab closed", "navigated to URL", "opened tab t3 at URL", "a confirm
 * dialog is open ... saying: <<<page-content ...>>>", "no navigation,
 * dialog or new tab"), appended to b: URLs redacted and percent-encoded
 * (snap_act_sb_url), the dialog message through the page-text writer
 * (snap_obs_put_page: escapes, cut on a character boundary). */
void snap_settled_describe(snap_agent *a, snap_tab *t, const snap_settled *s, base_buf *b);
/* The requests still pending after a settle (nothing when none): appended
 * to b as "; still pending: 2 requests (GET /poll, POST /collect)" (URLs
 * cut at their query, redacted, session values scrubbed, the page's own
 * origin left out), and as JSON members "pending_count", "pending":
 * [{method, url, type, own}] and "settle_capped" into an open object. */
void snap_settled_pending(snap_agent *a, snap_tab *t, const snap_settled *s, base_buf *b);
void snap_settled_json(snap_agent *a, snap_tab *t, const snap_settled *s, json_w *w);
/* (download.c) Whether a download tab started since since_ms is still in
 * progress (a settle waits for it, within its cap); the downloads into
 * out; their lines ("download: report.pdf (12,345 bytes) saved to PATH",
 * "download of x.pdf blocked: ...") appended to b ("; " first unless b
 * holds nothing past start); their JSON member "downloads". */
bool snap_dl_busy(snap_agent *a, int tab, int64_t since_ms);
void snap_dl_settled(snap_agent *a, int tab, int64_t since_ms, snap_settled *out);
void snap_dl_describe(snap_agent *a, const snap_settled *st, base_buf *b, size_t start);
void snap_dl_json(snap_agent *a, const snap_settled *st, json_w *w);

/* ---- act_util.c ---- */

/* url with secrets hidden, for showing: url_redact (url/url.h, the one
 * rule) by name, URL_REDACT_STRICT when strict (new; free with free();
 * NULL when out of memory): the userinfo and the values of query and
 * fragment parameters named like secrets become "[redacted]"; with strict
 * (a form with a password or one-time-code field was submitted) also
 * code, key, auth, mfa and the names in fields (NULL-terminated, may be
 * NULL; "*" stands for every name).
 * agent.c should store frame URLs through it (frame_update and
 * Page.navigatedWithinDocument), so that every output shows the redacted
 * form. */
char *snap_url_redact(const char *url, bool strict, const char *const *fields);
/* The same, strict, also hiding the values of the secret fields of the
 * latest action's form (a->act_secret): for URLs the page sends or reaches
 * while an action runs (the sink's audit, frame URLs). */
char *snap_url_redact_act(const snap_agent *a, const char *url);

/* ---- secval.c: secret values remembered as keyed hashes (W7) ---- */

#define SECVAL_LEN_MAX 256   /* normalised bytes: a longer value is not remembered */
/* Remember the value v (n bytes) of a secret field of document (tab,
 * frame, loader) as a keyed hash of it normalised (white space runs one
 * space, trimmed, ASCII lower-cased), never the value. */
void snap_secval_note(snap_agent *a, int tab, const char *frame, const char *loader,
                      const char *v, size_t n);
/* Whether s[0..n), normalised, is the whole value of a secret field
 * remembered for any document of a (text kept past its page: a trail). */
bool snap_secval_known(const snap_agent *a, const char *s, size_t n);
void snap_secval_free(snap_agent *a);

/* ---- scrub.c: session values never shown ---- */

/* Remember keyed hashes of a session value (a cookie or localStorage value
 * restored from the vault or captured from a login; n bytes), of the
 * tokens in it and of its encodings, never the value; shorter than 8
 * bytes: not remembered. */
void snap_scrub_note(snap_agent *a, const char *val, size_t n);
void snap_scrub_free(snap_agent *a);
/* url (or any text) with every remembered value in it, raw,
 * percent-encoded, lower-cased or in base64/base64url, replaced with
 * "[session-value]" (new; NULL when out of memory). A granted host is left
 * alone. */
char *snap_scrub_url(const snap_agent *a, const char *url);
char *snap_scrub_str(const snap_agent *a, const char *s);
/* A refused request as it may be shown (new; NULL when out of memory):
 * "GET https://[withheld].attacker.example (Image; path and query
 * withheld, 40 bytes)": a host outside the grant by its last two labels,
 * no path, no query, scrubbed. snap_request_origin_shown: the
 * "scheme://host[:port]" part alone. */
char *snap_request_shown(const snap_agent *a, const char *method, const char *url,
                         const char *type);
char *snap_request_origin_shown(const snap_agent *a, const char *url);
/* The same, but with no grant no host counts as granted (every one is
 * allowed, so a page chose it): the takeover's account to the model and a
 * login's refusal name an origin so (red team s17, R7-4's check). */
char *snap_origin_shown_strict(const snap_agent *a, const char *url);
/* A refused request's URL (already redacted) for the audit log, the
 * operator's record: that origin part, then its path and query with
 * session values scrubbed (new; NULL when out of memory). */
char *snap_request_audit_url(const snap_agent *a, const char *url);

/* ---- session.c, session_check.c ---- */

/* Make sure ctxs[0] (the untrusted context) exists. */
int snap_ctx_untrusted(snap_agent *a, snap_result *r);
/* The context for opening url: *ctx gets its index. A stored session is
 * restored into a new privileged context here (cookies; localStorage is
 * left pending for snap_ctx_prime). note (cap bytes) gets what the agent
 * must be told ("" when nothing) and *note_code SNAP_ELOGIN when the
 * session could not be used, else 0. */
int snap_ctx_pick(snap_agent *a, const char *url, size_t *ctx, char *note, size_t cap,
                  int *note_code, snap_result *r);
/* Before the first navigation of a tab in a context with pending
 * localStorage: set it for the origin (see session.c). */
int snap_ctx_prime(snap_agent *a, int tab_id, snap_result *r);
/* After an open of url (the URL asked for) in a privileged context: did
 * the service drop the session's credentials (then the context stops being
 * authenticated), or is there evidence it rejected the session (a
 * redirect of a non-login URL to a login page, HTTP 401/403 on the
 * document)? note (cap bytes) gets what the agent must be told; a
 * suspicion never changes the context and never fails the open. */
void snap_ctx_check(snap_agent *a, int tab_id, const char *url, char *note, size_t cap);
/* Header's auth=: the tab's context holds a session restored from the vault
 * or captured by a login, and the tab's page is on that session's origin. */
bool snap_tab_auth(const snap_agent *a, const snap_tab *t);
/* Whether the untrusted context may hold a live sign-in: a person held
 * control in it (a takeover; red team s18, R8-6), or it is the browser's
 * own default context (a browser that refused a context of ours, Electron
 * over --connect: the user's sign-ins; R8-6 c). An open, which lands there
 * unless a service's own, is judged as on a signed-in page. */
bool snap_open_person(const snap_agent *a);

/* ---- signin.c: a sign-in in the untrusted context (R8-6 b) ---- */

/* The sink's listener, for a request of tab t (or of its popup) the gate
 * let through (p: Fetch.requestPaused; its kind: sink.c request_kind):
 * a sign-in link marks its site at once; another sign-in shape waits
 * for the browser's answer and a new or changed cookie of the site. */
void snap_signin_seen(snap_agent *a, const snap_tab *t, const json_val *p, bool document,
                      bool subresource, bool data);
/* A Network event of a tab's session (the listener's): a request answered. */
void snap_signin_net(snap_agent *a, const char *method, const json_val *p);
/* Settle the waiting sign-ins (snap_sync; reads the context's cookies). */
void snap_signin_sync(snap_agent *a);
/* The signed-in site's origin (borrowed) whose site url (a URL or an
 * origin) is in, or NULL; snap_signin_any: the first one, or NULL. */
const char *snap_signin_site(const snap_agent *a, const char *url);
const char *snap_signin_any(const snap_agent *a);
/* Append the sites marked and not told yet (a line each) to out (a C
 * string of cap bytes); kept for the next result when it does not fit. */
void snap_signin_note(snap_agent *a, char *out, size_t cap);
void snap_signin_free(snap_agent *a);
/* The service origin whose session the tab's context holds (borrowed), or
 * NULL: every action of that tab, whatever origin its page is on, is
 * judged as on the service (its requests there carry the session). */
const char *snap_tab_service(const snap_agent *a, const snap_tab *t);
/* An open of origin would use a service's session: a context holds one for
 * it, or the grant names an identity for it (open restores it from the
 * vault; fail closed when the vault has none). */
bool snap_origin_service(const snap_agent *a, const char *origin);
/* Dispose the contexts this agent created; free what they hold. */
void snap_ctx_free_all(snap_agent *a);

/* ---- observe_render.c, observe_cache.c ---- */

/* Build the snapshot of tab t (header, marked content, paging footer; see
 * docs/snapshot.md) for query q (NULL = defaults); used by snap_observe and
 * by snap_open. The text is appended to r->text when that already holds
 * something (an action's account of what happened), else it becomes
 * r->text; r->structured is replaced by the snapshot's summary object. The
 * header carries r->obs when the caller already issued one, else a new
 * observation id is issued into r->obs. Calls snap_sync first. Returns 0,
 * or a SNAP_E* code with r filled by snap_fail. */
int snap_build(snap_agent *a, snap_tab *t, const snap_query *q, snap_result *r);
/* A tab's cached snapshot: pages, queries and text pages of an unchanged
 * document are served from it without reading the page again. NULL is a
 * no-op. */
struct snap_cache;
void snap_cache_free(struct snap_cache *c);

/* ---- agent_problems.c: what shows that a page is broken ---- */

/* Record a Log.entryAdded of level error (params p) of one of t's
 * sessions; other methods are ignored. The listener's: never waits. */
void snap_problem_event(snap_agent *a, snap_tab *t, const char *method, const json_val *p);
/* How many since t's document loaded (0 after a navigation). */
size_t snap_problems_count(const snap_tab *t);
/* fn on each kept text, oldest first (redacted, cut; page text). */
void snap_problems_each(const snap_tab *t, void (*fn)(void *ud, const char *text), void *ud);
void snap_problems_clear(snap_tab *t);

#endif
