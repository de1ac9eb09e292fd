/*
 * testlib.h — the one test helper library (issue 12, point 2). Linked into
 * every test program (build/tests/libsupport.a: harness.c, fixture.c and
 * testlib.c); the benchmarks link it too. One copy of what the tests used
 * to repeat: text checks, need-browser, the browser launch, scratch
 * directories, the world (fixture server + browser) and the rig (a gate on
 * a grant + an agent on it) with explicit cleanup, vault planting, planted
 * secret scans, a cdpgate child and the MCP test client over it, and
 * bounded waits.
 *
 * Rules: every helper that can fail makes a failed CHECK (with a detail)
 * or returns an error the caller checks; a missing browser is a skip
 * (test_skip), which CI turns into a failure (CDPGATE_REQUIRE_ALL=1),
 * exactly as each test's own copy did. No helper sleeps unasked: waits
 * are bounded and named (testlib_*_wait, testlib_sleep_ms).
 */
#ifndef CDPGATE_TESTS_TESTLIB_H
#define CDPGATE_TESTS_TESTLIB_H

#include "tests/harness.h"
#include "tests/fixture.h"
#include "cdp/cdp.h"
#include "gate/gate.h"
#include "snapshot/snapshot.h"
#include "vault/vault.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- text checks ---- */

/* CHECK that s is (CHECK_HAS) or is not (CHECK_LACKS) in text (NULL reads
 * as ""); on failure the detail shows s and the first 3000 bytes of text.
 * Each is one check, worth 1 when it passed. */
int testlib_check_has(const char *text, const char *s, bool want, const char *file,
                      int line);
#define CHECK_HAS(text, s) testlib_check_has((text), (s), true, __FILE__, __LINE__)
#define CHECK_LACKS(text, s) testlib_check_has((text), (s), false, __FILE__, __LINE__)

/* One CHECK per planted secret (plants: NULL-terminated) that it is not in
 * text; a hit shows the secret, what (where it looked) and the text
 * around it. */
void testlib_check_no_plants(const char *const *plants, const char *what, const char *text);

/* ---- time ---- */

/* Monotonic milliseconds. */
int64_t testlib_now_ms(void);
/* Sleep ms: only for a bounded polling loop's step, or a wait the test
 * names as deliberate. */
void testlib_sleep_ms(int ms);

/* ---- scratch directories ---- */

/* A new directory "$TMPDIR/cdpgate-NAME-XXXXXX" (or /tmp) into out. 0, or
 * -1 with the reason on stderr. Remove it with test_rm_rf. */
int testlib_tempdir(const char *name, char *out, size_t cap);

/* ---- page scripts ---- */

/* The params of a Runtime.evaluate of expr with the boolean option opt
 * ("returnByValue", "awaitPromise") true: {"expression":EXPR,OPT:true}, new
 * JSON text (free it), or NULL when out of memory. */
char *testlib_eval_params(const char *expr, const char *opt);

/* ---- the browser ---- */

#define TESTLIB_NO_BROWSER "no Chromium-family browser installed (apt-get install -y chromium)"

/* True when a browser for tests is installed; else test_skip and false. */
bool testlib_need_browser(void);
/* need_browser, then launch one with the extra arguments args (NULL-
 * terminated, may be NULL), over a pipe or (use_port) a port. A failed
 * launch is a failed CHECK with the reason. NULL when skipped or failed. */
cdp_browser *testlib_launch(const char *const *args, bool use_port);

/* ---- the world: fixture server + scratch directory + one browser ---- */

typedef struct {
    int port;                   /* the fixture server's, or 0 */
    pid_t server_pid;
    char root[256];             /* scratch directory of this run */
    char log[300];              /* the server's request log ("" when off) */
    const char *const *args;    /* browser arguments (FIXTURE_HOST_RULES...) */
    cdp_browser *browser;       /* launched on first testlib_world_browser */
} testlib_world;

/* Make the scratch directory (cdpgate-NAME-XXXXXX), start the fixture
 * server (logging its requests to root/requests.log when log_requests).
 * The browser is launched later, by the first test that needs it. 0, or -1
 * with the reason on stderr (call it from main, before test_main). */
int testlib_world_up(testlib_world *w, const char *name, const char *const *browser_args,
                     bool log_requests);
/* The world's browser, launched on the first call (testlib_launch: a skip
 * when none is installed, a failed check when it does not start). */
cdp_browser *testlib_world_browser(testlib_world *w);
/* Free the browser, stop the server, remove root (kept, and said on
 * stderr, when CDPGATE_KEEP is set). */
void testlib_world_down(testlib_world *w);
/* "http://HOST:PORT/PATH" and "http://HOST:PORT" on the world's server. */
void testlib_world_url(const testlib_world *w, char *out, size_t cap, const char *host,
                       const char *path);
void testlib_world_origin(const testlib_world *w, char *out, size_t cap, const char *host);

/* ---- the rig: a gate on a grant and an agent on it ---- */

/* A gate (gate_new) on grant g with options go (may be NULL); a failure is
 * a failed CHECK with the reason. */
gate *testlib_gate(const gate_grant *g, const gate_opts *go);
/* An agent on browser b with options o (may be NULL); a failure is a
 * failed CHECK with the reason. */
snap_agent *testlib_agent(cdp_browser *b, const snap_opts *o);

typedef struct {
    gate *g;
    snap_agent *a;
} testlib_rig;

/* One call: the world's browser (launched if need be), a gate on grant g
 * (NULL: no gate) with go, an agent on it with o (its gate field is set
 * to the new gate). True when the agent is up; else the reason was
 * checked or skipped. Always pair with testlib_rig_down. */
bool testlib_rig_up(testlib_rig *x, testlib_world *w, const gate_grant *g,
                    const gate_opts *go, const snap_opts *o);
/* Free the agent, then the gate; x is zeroed. */
void testlib_rig_down(testlib_rig *x);

/* ---- vault ---- */

/* A fresh vault store in a new directory under root (ROOT/vaultN, its path
 * into dir). A failure is a failed CHECK. */
vault *testlib_vault_new(const char *root, char *dir, size_t cap);
/* vault_put(v, origin, identity, state, expiry) as a CHECK. 0 or -1. */
int testlib_vault_plant(vault *v, const char *origin, const char *identity,
                        const char *state, int64_t expiry);
/* The bank fixture's stored state (tests/fixtures/bank/) for origin: the
 * HttpOnly bank_session=session (SameSite=Lax), the bank_pref cookie
 * (expires in a day), extra_cookies (NULL, or more cookie objects joined
 * after a comma) and localStorage bank_token. The length, or -1 when it
 * does not fit. */
int testlib_bank_state(char *out, size_t cap, const char *origin, const char *session,
                       const char *extra_cookies);

/* ---- a cdpgate child and the MCP test client ---- */

/* $CDPGATE_BIN, else build/cdpgate. */
const char *testlib_cdpgate_bin(void);
/* True when that binary is built; else test_skip and false. */
bool testlib_need_cdpgate(void);

/* fixture_child_spawn with its stderr in a new file under dir
 * (DIR/childN.err). 0 or -1. */
int testlib_child_spawn(fixture_child *c, const char *dir, const char *const *env,
                        const char *const *argv, bool fd3);
/* Wait (bounded, 5 s) for the exit if it runs, close its stdout, free
 * what it wrote. */
void testlib_child_free(fixture_child *c);
/* Wait (bounded, polling its stderr file every 20 ms) for needle on its
 * stderr. */
bool testlib_child_stderr_wait(fixture_child *c, const char *needle, int timeout_ms);

/* Write one JSON-RPC request line {"jsonrpc":"2.0","id":ID,"method":...,
 * "params":PARAMS} to its stdin, as a CHECK. */
bool testlib_mcp_send(fixture_child *c, int id, const char *method, const char *params);
/* The response line for id (new), looking from offset from of its stdout;
 * "" (new) after a failed CHECK when none came in timeout_ms. */
char *testlib_mcp_response(fixture_child *c, size_t from, int id, int timeout_ms);
/* send, then the response (looking from what it had written before). */
char *testlib_mcp_request(fixture_child *c, int id, const char *method, const char *params,
                          int timeout_ms);
/* tools/call name with arguments args (a JSON object), 60 s. */
char *testlib_mcp_tool(fixture_child *c, int id, const char *name, const char *args);
/* initialize as id 1 (client name), CHECK it names cdpgate, then the
 * initialized notification. */
void testlib_mcp_init(fixture_child *c, const char *client);
/* The ref on the (JSON-escaped) snapshot line holding needle: "e12" into
 * out, "" when no line holding needle has one. */
void testlib_mcp_ref(const char *text, const char *needle, char *out, size_t cap);
/* Whether a replay result (JSON text) has an output name holding value (JSON-escaped) framed in the page-content markers as
 * replay writes page text: "<<<page-content nonce=N>>>\nVALUE\n<<<end
 * page-content nonce=N>>>" (red team s14, R4-6). */
bool testlib_replay_output(const char *json, const char *name, const char *value);

#endif
