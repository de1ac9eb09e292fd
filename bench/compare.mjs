// compare.mjs — prints the side-by-side tables of `make bench` from the JSON
// that pw_bench.mjs, mcp_bench.mjs and act_bench wrote in one run, with the
// ratios and issue 3's targets. Figures are printed, never asserted: the exit
// status is 0 whatever they are.
//
// Coverage: every actionable element the browser's accessibility tree shows
// (links, buttons, text boxes, selects, checkboxes, [role=button], editable
// regions...; pw_bench.mjs lists them) is looked for among the ref-carrying
// lines of a server's snapshot, all pages of it: by role and name, then name,
// then name prefix (long names may be shortened), then by role where the
// line or the element has no name.
//
//   node bench/compare.mjs RESULTS_DIR
// Environment: BENCH_BUDGET_CHARS (cdpgate's default snapshot budget, 12000).
import fs from 'node:fs';
import path from 'node:path';
import { PAGES, median, refLines, tokens } from './common.mjs';

const dir = process.argv[2] || 'build/bench/results';
const load = (f) => {
    try {
        return JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    } catch (e) {
        return { loadError: `${f}: ${e.code === 'ENOENT' ? 'not written' : e.message}` };
    }
};
const pw = load('pw.json'), cg = load('cdpgate.json'), act = load('act.json');
const cst = load('cdpgate-static.json');
const gt = (() => {
    try {
        return JSON.parse(fs.readFileSync(path.join(dir, '..', 'gate.json'), 'utf8'));
    } catch (e) {
        return {};
    }
})();
const budget = Number(process.env.BENCH_BUDGET_CHARS || 12000);
const pm = pw.mcp || {}, cm = cg.mcp || {};

const num = (x, d = 0) => (typeof x === 'number' && isFinite(x)
    ? x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : '-');
const ratio = (a, b) => (typeof a === 'number' && typeof b === 'number' && b > 0 ? a / b : null);
const rtxt = (r) => (r == null ? '-' : r < 0.01 ? r.toExponential(1) + 'x' : r.toFixed(r < 0.1 ? 3 : 2) + 'x');
const met = (r, t) => (r == null ? '-' : r <= t ? 'yes' : 'NO');
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
const mib = (kb) => (typeof kb === 'number' ? kb / 1024 : null);

function row(label, a, b, d, target) {
    const r = ratio(a, b);
    console.log(`  ${pad(label, 46)}${lpad(num(a, d), 11)}${lpad(num(b, d), 13)}${lpad(rtxt(r), 10)}` +
        (target != null ? `${lpad('<= ' + target + 'x', 10)}${lpad(met(r, target), 5)}` : ''));
}

// Names compare without case or white space (the AX tree may put a space
// between inline elements where a snapshot does not; Swagger UI puts
// zero-width spaces in paths) and without a final "…".
const norm = (s) => String(s || '').toLowerCase().replace(/(\u2026|\.\.\.)\s*$/, '')
    .replace(/[\s\u00ad\u200b-\u200d\u2060\ufeff]+/g, '');
const ROLE = { searchbox: 'textbox', search: 'textbox', summary: 'button', DisclosureTriangle: 'button',
               PopUpButton: 'button',
               ToggleButton: 'button', editable: 'textbox' };
const nrole = (r) => (ROLE[r] || r || '').toLowerCase();

function coverage(expected, text, refRe) {
    if (!expected || !text) return null;
    const have = refLines(text, refRe).map((l) => ({ role: nrole(l.role), name: norm(l.name), used: false }));
    const want = expected.map((e) => ({ role: nrole(e.role), name: norm(e.name), raw: e.name, found: false }));
    const passes = [
        (w, h) => h.role === w.role && h.name === w.name,
        (w, h) => w.name && h.name === w.name,
        (w, h) => w.name && h.name && Math.min(w.name.length, h.name.length) >= 10 &&
            (w.name.startsWith(h.name) || h.name.startsWith(w.name)),
        // a line without a name whose role matches: some snapshots leave the
        // name off when it is the text of the children printed below it
        (w, h) => h.role === w.role && !h.name,
        (w, h) => !w.name && h.role === w.role,
        (w, h) => !w.name && !h.name,
    ];
    for (const p of passes) {
        for (const w of want) {
            if (w.found) continue;
            const h = have.find((x) => !x.used && p(w, x));
            if (h) h.used = w.found = true;
        }
    }
    const missing = want.filter((w) => !w.found);
    return { found: want.length - missing.length, total: want.length,
             missing: [...new Set(missing.map((w) => `${w.role} "${w.raw.slice(0, 40)}"`))].slice(0, 4) };
}
const snapText = (server, id) => {
    try {
        return fs.readFileSync(path.join(dir, 'snap', `${server}-${id}.txt`), 'utf8');
    } catch {
        return null;
    }
};
const covtxt = (c) => (c ? `${c.found}/${c.total}` : '-');

// cdpgate's snapshot figures: from `cdpgate mcp` when it was measured, else
// from the library (act_bench's snap_observe, same text), tokens counted here.
const useLib = !cm.pages;
function cgPage(id) {
    if (!useLib) return cm.pages[id];
    const a = act.pages?.[id], t = snapText('cdpgate-lib', id);
    if (!a || a.error || t == null) return a ? { error: a.error } : undefined;
    const parts = t.split('\n\f\n');
    return { ...a, snapshot_tokens: tokens(parts[0]), all_tokens: parts.reduce((x, p) => x + tokens(p), 0) };
}

console.log(`\n== Agent-facing figures, side by side in one run (medians; nothing asserted)`);
console.log(`   peers: playwright-core ${pw.versions?.['playwright-core'] || '?'} (library), ` +
    `@playwright/mcp ${pw.versions?.['@playwright/mcp'] || '?'}; both drive the same Chromium; ` +
    `tokens are o200k (gpt-tokenizer)`);
for (const x of [pw, cg, act]) if (x.loadError) console.log(`   (${x.loadError})`);
if (cg.unavailable) console.log(`   cdpgate mcp not measured: ${cg.unavailable}`);
if (act.error) console.log(`   cdpgate library not measured: ${act.error}`);
for (const [who, m] of [['@playwright/mcp', pm], ['cdpgate mcp', cm]]) {
    for (const e of m.errors || []) console.log(`   ${who} error: ${e}`);
}

const head = (title, a, b) => console.log(`\n${pad(title, 48)}${lpad(a, 11)}${lpad(b, 13)}` +
    `${lpad('ratio', 10)}${lpad('target', 10)}${lpad('met', 5)}`);
head('MCP server over stdio (official SDK client)', 'cdpgate', 'pw-mcp');
row(`start to initialize answered, ms (${pm.start_ms?.length || 0} runs)`, cm.start_median_ms, pm.start_median_ms, 1, 0.01);
row(`  raw: spawn + one line, no SDK (${pm.raw_start_ms?.length || 0} runs), ms`, cm.raw_start_median_ms, pm.raw_start_median_ms, 1, 0.01);
row('first open, ms (a lazy server launches here)', cm.act?.open_ms, pm.act?.open_ms, 1);
row('tools/list, tools', cm.tools?.count, pm.tools?.count, 0);
row('tools/list, characters (JSON of the tools)', cm.tools?.chars, pm.tools?.chars, 0);
row('tools/list, o200k tokens', cm.tools?.tokens, pm.tools?.tokens, 0, 0.3);
row(`browser_click, ms (${pm.act?.click_ms?.length || 0} clicks, action page)`, cm.act?.click_median_ms, pm.act?.click_median_ms, 1, 0.1);
row('browser_type (fill, no submit), ms', cm.act?.type_median_ms, pm.act?.type_median_ms, 1);
row('browser_click result, o200k tokens', cm.act?.click_result_tokens, pm.act?.click_result_tokens, 0);
row('browser_type + submit on TodoMVC, ms', median(cm.pages?.todomvc?.setup_type_ms || []),
    median(pm.pages?.todomvc?.setup_type_ms || []), 1);
row('driver RSS after initialize (VmHWM), MiB', mib(cm.idle_vmhwm_kb), mib(pm.idle_vmhwm_kb), 1, 0.02);
row('  peak after the action page, MiB', mib(cm.act_vmhwm_kb), mib(pm.act_vmhwm_kb), 1, 0.02);
row(`  peak after all ${PAGES.length} pages, MiB`, mib(cm.server_vmhwm_kb), mib(pm.server_vmhwm_kb), 1, 0.02);
row('  at the end: private (RssAnon), MiB', mib(cm.server_rss_anon_kb), mib(pm.server_rss_anon_kb), 1);
row('  at the end: mapped from files (RssFile), MiB', mib(cm.server_rss_file_kb), mib(pm.server_rss_file_kb), 1);
const sm = cst.mcp;
if (sm && !cst.unavailable) {
    console.log(`  the static build (make STATIC=1: musl, one file, no shared library), same run:`);
    row(`  start to initialize answered, ms`, sm.start_median_ms, pm.start_median_ms, 1, 0.01);
    row('  driver RSS after initialize (VmHWM), MiB', mib(sm.idle_vmhwm_kb), mib(pm.idle_vmhwm_kb), 1, 0.02);
    row(`  peak after all ${PAGES.length} pages, MiB`, mib(sm.server_vmhwm_kb), mib(pm.server_vmhwm_kb), 1, 0.02);
    row('  browser_click, ms', sm.act?.click_median_ms, pm.act?.click_median_ms, 1, 0.1);
    for (const e of sm.errors || []) console.log(`   static build error: ${e}`);
} else {
    console.log(`  (static build not measured: ${cst.unavailable || cst.loadError || 'no figures'})`);
}
row('RSS of its process tree, browser incl., MiB', mib(cm.tree_rss_kb), mib(pm.tree_rss_kb), 0);
console.log(`  (driver RSS: VmHWM of the server process alone, node for @playwright/mcp, cdpgate for cdpgate;` +
    `\n   the tree adds the Chromium it launched: ${cm.tree_procs || '-'} vs ${pm.tree_procs || '-'} processes.` +
    `\n   Start: spawn to initialize answered; the SDK client adds its own overhead, the raw line` +
    `\n   does not; node's spawn floor, /bin/cat echoing a line: ${num(pm.spawn_floor_ms ?? cm.spawn_floor_ms, 1)} ms)`);

const lib = pw.lib || {};
head(`Library, action page (${lib.n || '-'} each)`, 'cdpgate', 'Playwright');
row('click, ms (snap_click / locator.click)', act.act?.click_median_ms, lib.click_median_ms, 2, 1);
row('type, ms (snap_type / locator.fill)', act.act?.type_median_ms, lib.fill_median_ms, 2, 1);
row('browser launch to ready, ms', act.launch_ms, lib.launch_ms, 0);
row('library process peak RSS, MiB (act_bench / -)', mib(act.vmhwm_kb), null, 1);
if (gt.check_us !== undefined && act.act?.click_median_ms) {
    const click_us = act.act.click_median_ms * 1000;
    console.log(`  gate per decision: ${gt.check_us.toFixed(2)} us (with the audit line: ` +
        `${gt.check_audit_us.toFixed(2)} us) = ${(100 * gt.check_us / click_us).toFixed(3)}% ` +
        `(${(100 * gt.check_audit_us / click_us).toFixed(3)}%) of a click`);
}
if (lib.error) console.log(`  Playwright library error: ${lib.error}`);
if (act.act?.error) console.log(`  cdpgate library error: ${act.act.error}`);

console.log(`\nSnapshots per page: o200k tokens (characters) and latency; cdpgate's first page is its` +
    `\ndefault budget (${num(budget)} chars), "all" pages through with offset until nothing is left.` +
    `\nCoverage: actionable elements of the page (browser AX tree) that carry a ref in the snapshot.` +
    (useLib ? `\n(cdpgate mcp not measured: cdpgate's columns come from the library, act_bench's snap_observe)` : ''));
console.log(`  ${pad('page', 11)}${lpad('actionable', 10)} | ${pad('cdpgate default', 21)}${lpad('ms', 7)}` +
    ` | ${pad('cdpgate all', 21)}${lpad('ms', 7)}${lpad('cover', 9)}` +
    ` | ${pad('pw-mcp browser_snapshot', 23)}${lpad('ms', 7)}${lpad('cover', 9)}` +
    ` | ${lpad('default', 8)}${lpad('all', 8)}${lpad('<=0.7x', 7)}`);
const notes = [];
for (const pg of PAGES) {
    const a = pw.actionable?.[pg.id], c = cgPage(pg.id), p = pm.pages?.[pg.id];
    const cc = coverage(a?.elements, snapText(useLib ? 'cdpgate-lib' : 'cdpgate', pg.id), /\[(e\d+)\]/);
    const pc = coverage(a?.elements, snapText('playwright-mcp', pg.id), /\[ref=([a-z0-9]+)\]/);
    const sz = (t, ch) => (t == null ? '-' : `${num(t)} (${num(ch)})`);
    const rAll = ratio(c?.all_tokens, p?.snapshot_tokens);
    const full = cc && cc.found === cc.total;
    const ok = rAll == null ? '-' : rAll <= 0.7 && full ? 'yes' : 'NO';
    console.log(`  ${pad(pg.id, 11)}${lpad(a?.elements?.length ?? '-', 10)} | ` +
        `${pad(sz(c?.snapshot_tokens, c?.snapshot_chars), 21)}${lpad(num(c?.snapshot_median_ms, 1), 7)} | ` +
        `${pad(c?.pages ? `${sz(c.all_tokens, c.all_chars)} ${c.pages}p` : '-', 21)}${lpad(num(c?.all_ms, 0), 7)}` +
        `${lpad(covtxt(cc), 9)} | ${pad(sz(p?.snapshot_tokens, p?.snapshot_chars), 23)}` +
        `${lpad(num(p?.snapshot_median_ms, 1), 7)}${lpad(covtxt(pc), 9)} | ` +
        `${lpad(rtxt(ratio(c?.snapshot_tokens, p?.snapshot_tokens)), 8)}${lpad(rtxt(rAll), 8)}${lpad(ok, 7)}`);
    if (c && c.snapshot_chars > budget) notes.push(`${pg.id}: cdpgate's default snapshot is ${num(c.snapshot_chars)} chars, over the ${num(budget)} budget`);
    if (cc && cc.missing.length) notes.push(`${pg.id}: cdpgate misses ${cc.total - cc.found}, e.g. ${cc.missing.join(', ')}`);
    if (pc && pc.missing.length) notes.push(`${pg.id}: @playwright/mcp misses ${pc.total - pc.found}, e.g. ${pc.missing.join(', ')}`);
    if (c?.error) notes.push(`${pg.id}: cdpgate: ${c.error.slice(0, 160)}`);
    if (a?.error) notes.push(`${pg.id}: actionable list failed: ${a.error}`);
    if (c?.ready === false || p?.ready === false) notes.push(`${pg.id}: ready text "${pg.ready}" never seen`);
}
for (const n of notes) console.log(`  note: ${n}`);

// Issue 13, point 4: big pages, cdpgate's default snapshot against
// @playwright/mcp's browser_snapshot. open = navigate + the snapshot both
// return; cold = the page changed since the last observation; warm = the
// unchanged page again at once; idle = the unchanged page after 5 s.
{
    const big = PAGES.filter((p) => p.big || cm.pages?.[p.id]?.cold_ms);
    if (big.length) {
        console.log(`\nBig pages (issue 13 point 4), ms, medians: cdpgate mcp vs @playwright/mcp; targets: cold and` +
            `\nwarm <= 0.5x, open <= 1x (warm on cdpgate should be a cache hit: milliseconds)`);
        console.log(`  ${pad('page', 10)}${pad('', 6)}${lpad('cdpgate', 10)}${lpad('pw-mcp', 10)}${lpad('ratio', 9)}` +
            `${lpad('target', 8)}${lpad('met', 5)}`);
        for (const pg of big) {
            const c = cm.pages?.[pg.id], p = pm.pages?.[pg.id];
            const line = (what, a, b, t) => {
                const r = ratio(a, b);
                console.log(`  ${pad(what === 'open' ? pg.id : '', 10)}${pad(what, 6)}${lpad(num(a, 1), 10)}` +
                    `${lpad(num(b, 1), 10)}${lpad(rtxt(r), 9)}${lpad('<= ' + t + 'x', 8)}${lpad(met(r, t), 5)}`);
            };
            line('open', c?.open_ms, p?.open_ms, 1);
            line('cold', c?.cold_median_ms, p?.cold_median_ms, 0.5);
            line('warm', c?.snapshot_median_ms, p?.snapshot_median_ms, 0.5);
            line('idle', c?.idle_ms, p?.idle_ms, 0.5);
        }
        const floor = lib.cold_floor || {};
        if (big.some((pg) => floor[pg.id])) {
            console.log(`  browser's own share of a cold build: DOMSnapshot + getFullAXTree pipelined over a CDP` +
                `\n  session (no cdpgate code) vs Playwright's ariaSnapshot, same page, alternating, medians;` +
                `\n  the least cdpgate's cold ratio can be with getFullAXTree as its source (docs/snapshot.md)`);
            for (const pg of big) {
                const f = floor[pg.id];
                if (!f) continue;
                console.log(`  ${pad(pg.id, 10)}${pad('floor', 6)}${lpad(num(f.fetch_median_ms, 1), 10)}` +
                    `${lpad(num(f.aria_median_ms, 1), 10)}${lpad(rtxt(ratio(f.fetch_median_ms, f.aria_median_ms)), 9)}`);
            }
        }
    }
    const tc = cm.pages?.todomvc, tp = pm.pages?.todomvc;
    if (tc?.filter_ms || tp?.filter_ms) {
        console.log(`\nTodoMVC click-to-result (filter links ${PAGES.find((p) => p.id === 'todomvc')?.filter?.join(', ')}), medians`);
        row('browser_click on a filter, ms', tc?.filter_median_ms, tp?.filter_median_ms, 1);
        row('  its result, o200k tokens', tc?.filter_result_tokens, tp?.filter_result_tokens, 0);
        for (const r of tc?.filter_results || []) {
            console.log(`  cdpgate, "${r.name}": ${r.text.replace(/\s+/g, ' ').slice(0, 220)}`);
        }
    }
}

console.log(`\nLibrary snapshot latency, ms: cdpgate snap_observe (default budget; all pages) vs` +
    `\nPlaywright locator('body').ariaSnapshot() (whole page, no refs)`);
for (const pg of PAGES) {
    const c = act.pages?.[pg.id], p = lib.aria_snapshot?.[pg.id];
    console.log(`  ${pad(pg.id, 11)}${lpad(num(c?.snapshot_median_ms, 1), 9)}${lpad(num(c?.all_ms, 1), 9)}` +
        `${lpad(num(p?.median_ms, 1), 11)}${c?.error ? '   error: ' + c.error.slice(0, 80) : ''}`);
}
