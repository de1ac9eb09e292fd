/*
 * page_js.h — the page scripts of page_js.c (read them there: each says what
 * it does, where it runs and what it returns). Internal to snapshot/.
 *
 * Tests that include it: tests/test_gate_accept.c, to run the one
 * secret-field rule (SNAP_JS_SECRET_KIND) itself in a page and compare it
 * with the views and the C rule (secret_rule_agree); tests/test_takeover.c,
 * to name a page-writing script (snap_js_focus_fn) the person's sink
 * permits must refuse (human_tabs).
 */
#ifndef CDPGATE_PAGE_JS_H
#define CDPGATE_PAGE_JS_H

/* The one secret-field rule (docs/threat-model.md, "The secret-field
 * rule"): JavaScript source of a function expression, (e) -> its kind bits
 * as SNAP_SECRET_* (snap_int.h): 1 an <input> (any case) whose type
 * attribute holds "password" (any case); 2 an element whose autocomplete
 * attribute holds "password" or "one-time-code"; 4 one whose autocomplete
 * holds "cc-" (a payment card); 0 not secret. Attributes are read through
 * Element.prototype (a form's named controls cannot hide them). Included
 * by every script that asks (page_js.c isSec, page_walk.c w_secret and
 * the walker's leak check); observe_dom.c applies the same rule in C to a
 * DOM snapshot, act_shot_mask.c's SHOT_SECRET_SEL as a CSS selector. */
#define SNAP_JS_SECRET_KIND \
    "(function(e){if(!(e instanceof Element))return 0;" \
    "var g=function(k){var v=Element.prototype.getAttribute.call(e,k);" \
    "return v===null?'':String(v).toLowerCase();},a=g('autocomplete');" \
    "return(String(e.localName).toLowerCase()==='input'&&g('type').indexOf('password')>=0?1:0)|" \
    "(a.indexOf('password')>=0||a.indexOf('one-time-code')>=0?2:0)|" \
    "(a.indexOf('cc-')>=0?4:0);})"

/* Room for snap_js_scroll_expr and "(<int>)" (checked in page_js.c). */
#define SNAP_JS_SCROLL_CAP 1024
/* Room for the Runtime.evaluate params of snap_js_ls_get (checked there). */
#define SNAP_JS_LS_GET_CAP 160


/* the actions (act_*.c) */
extern const char snap_js_focus_on_fn[];
extern const char snap_js_focus_fn[];
extern const char snap_js_sf_known_fn[];
/* screenshots (act_shot_mask.c, where they are defined) */
extern const char snap_js_shot_secrets_fn[];
extern const char snap_js_shot_is_secret_fn[];
extern const char snap_js_shot_field_fn[];
extern const char snap_js_shot_drawn_expr[];
extern const char snap_js_shot_view_fn[];    /* act_shot_view.c */
extern const char snap_js_state_fn[];
extern const char snap_js_contains_fn[];
extern const char snap_js_cover_fn[];
extern const char snap_js_observe_fn[];
extern const char snap_js_observe_doc_expr[];
extern const char snap_js_collect_fn[];
extern const char snap_js_unobserve_fn[];
extern const char snap_js_after_fn[];
extern const char snap_js_pick_option_fn[];
extern const char snap_js_raf2_expr[];
extern const char snap_js_frame_expr[];
extern const char snap_js_file_input_fn[];
extern const char snap_js_prep_type_fn[];
extern const char snap_js_value_fn[];
extern const char snap_js_select_fn[];
extern const char snap_js_select_pick_fn[];
extern const char snap_js_option_words_fn[];
extern const char snap_js_find_option_fn[];
extern const char snap_js_aria_selected_fn[];
extern const char snap_js_chosen_fn[];
extern const char snap_js_value_select_fn[];
extern const char snap_js_sf_expr[];
extern const char snap_js_focus_expr[];
extern const char snap_js_focus_deep_expr[];
extern const char snap_js_focus_same_fn[];
extern const char snap_js_scroll_expr[];
extern const char snap_js_scroll_frame_expr[];
extern const char snap_js_scroll_back_expr[];
extern const char snap_js_in_view_expr[];

/* the agent (agent*.c) */
extern const char snap_js_connected_fn[];
extern const char snap_js_redirect_expr[];
extern const char snap_js_mut_expr[];

/* the snapshot (observe_walk.c) */
extern const char snap_js_walk_def1[];
extern const char snap_js_walk_def2[];
extern const char snap_js_walk_def3[];
extern const char snap_js_walk_def4[];
extern const char snap_js_walk_expr[];
extern const char snap_js_walk_next_expr[];
extern const char snap_js_walk_ref_fn[];
extern const char snap_js_walk_sec_fn[];
extern const char snap_js_walk_leak_fn[];
extern const char snap_js_walk_mask_fn[];
extern const char snap_js_walk_id_fn[];
extern const char snap_js_walk_box_expr[];
extern const char snap_js_walk_sv_expr[];
extern const char snap_js_secret_values_expr[];
/* recording (record.c, where it is defined) */
extern const char snap_js_record_fn[];

/* browser contexts and login (session.c) */
extern const char snap_js_ls_set_prefix[];
extern const char snap_js_ls_set_suffix[];
extern const char snap_js_ls_get[];
extern const char snap_js_ls_keys[];
extern const char snap_js_wall[];

/* the gate glue (policy.c) */
/* A template (page_js.c): snap_js_facts_fn, SNAP_JS_FACTS_WHOLE, then
 * snap_js_facts_tail. */
#define SNAP_JS_FACTS_WHOLE "65536"
extern const char snap_js_facts_fn[];
extern const char snap_js_facts_tail[];
extern const char snap_js_acted_fn[];
extern const char snap_js_present_fn[];
extern const char snap_js_submitter_fn[];

#endif
