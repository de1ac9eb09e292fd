// common.mjs — shared by pw_bench.mjs, mcp_bench.mjs and compare.mjs: the
// page list, medians, o200k token counts, process memory from /proc, and the
// MCP measurement itself, run identically against any server through the
// official SDK client (only the tool names and argument shapes differ, given
// by an adapter).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StdioClientTransport, countTokens, tokensEstimated } from './peers/deps.mjs';
export { tokensEstimated };

export const BROWSER = process.env.CDPGATE_BROWSER || '/usr/bin/chromium';
// The flags both peers launch /usr/bin/chromium with (see shared/CDP-NOTES.md).
export const BROWSER_ARGS = ['--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'];

// Pages, served by bench/serve.mjs from build/bench/site (bench/pages.sh).
//   setup: typed into a text box (found by its accessible name) before measuring;
//   ready: text that the snapshot shows once the page has rendered its content.
//   big: also measured cold (see measureMcp) for issue 13's 0.5x targets
//        (BENCH_COLD_ALL=1: every page, as bench/smoke.sh does).
//   filter: links clicked in turn after setup (click-to-result with change
//           reporting: TodoMVC's filters hide and show items).
// BENCH_PAGES=dense,long keeps only those (bench/smoke.sh: the generated pages).
const ALL_PAGES = [
    { id: 'todomvc', label: 'TodoMVC (vanillajs, 3 todos)', path: '/todomvc/examples/vanillajs/index.html',
      setup: { role: 'textbox', name: 'What needs to be done?',
               texts: ['Buy milk', 'Write the benchmark', 'Ship cdpgate'] },
      filter: ['Active', 'All'] },
    { id: 'swagger', label: 'Swagger UI, Docker Engine API', path: '/swagger/index.html',
      ready: 'Docker Engine API', big: true },
    { id: 'jsoneditor', label: 'JSONEditor (switch mode)', path: '/jsoneditor/examples/03_switch_mode.html' },
    { id: 'python', label: 'Python 3.11 library/stdtypes', path: '/python/library/stdtypes.html', big: true },
    { id: 'genindex', label: 'Python 3.11 general index (all)', path: '/python/genindex-all.html', big: true },
    { id: 'postgres', label: 'PostgreSQL 15 SELECT', path: '/postgres/sql-select.html', big: true },
    { id: 'dense', label: 'generated dense (651 controls)', path: '/gen/dense.html' },
    { id: 'long', label: 'generated long article', path: '/gen/long.html' },
];
export const PAGES = ALL_PAGES.filter((p) => !process.env.BENCH_PAGES ||
    process.env.BENCH_PAGES.split(',').includes(p.id));
export const ACT_PATH = '/gen/act.html';

export function median(a) {
    const v = a.filter((x) => typeof x === 'number' && isFinite(x)).sort((x, y) => x - y);
    return v.length ? v[Math.floor(v.length / 2)] : null;
}

export function tokens(s) {
    try {
        return countTokens(s, { disallowedSpecial: new Set() });
    } catch {
        return countTokens(s.replace(/<\|/g, '< |'));
    }
}

export function now() {
    return performance.now();
}

function procField(pid, field) {
    try {
        const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+)`, 'm'));
        return m ? Number(m[1]) : null;
    } catch {
        return null;
    }
}
export const vmHWM = (pid) => procField(pid, 'VmHWM');
export const vmRSS = (pid) => procField(pid, 'VmRSS');

// pid and all its live descendants (by ppid in /proc/N/stat).
export function processTree(pid) {
    const kids = new Map();
    for (const d of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(d)) continue;
        try {
            const st = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
            const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
            if (!kids.has(ppid)) kids.set(ppid, []);
            kids.get(ppid).push(Number(d));
        } catch { /* gone */ }
    }
    const out = [];
    const todo = [pid];
    while (todo.length) {
        const p = todo.pop();
        out.push(p);
        for (const k of kids.get(p) || []) todo.push(k);
    }
    return out;
}

const alive = (pid) => {
    try {
        process.kill(pid, 0);
        return true;
    } catch {
        return false;
    }
};

// End pids we started (by pid only): TERM, then KILL after a grace period.
export async function reap(pids, graceMs = 3000) {
    const left = pids.filter(alive);
    for (const p of left) try { process.kill(p, 'SIGTERM'); } catch { /* gone */ }
    const end = Date.now() + graceMs;
    while (Date.now() < end && left.some(alive)) await sleep(50);
    for (const p of left.filter(alive)) try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
}

export function textOf(res) {
    return (res?.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// Lines carrying a ref: {role, name, ref}. refRe's group 1 is the ref.
export function refLines(text, refRe) {
    const out = [];
    for (const line of text.split('\n')) {
        const r = line.match(refRe);
        if (!r) continue;
        const m = line.match(/^\s*(?:-\s+)?'?([A-Za-z][\w-]*)(?:\s+"((?:[^"\\]|\\.)*)")?/);
        out.push({ role: m ? m[1] : '', name: m && m[2] ? m[2].replace(/\\(.)/g, '$1') : '', ref: r[1] });
    }
    return out;
}

export function findRef(text, refRe, role, name) {
    const hit = refLines(text, refRe).find((l) => l.role === role && l.name === name);
    return hit ? hit.ref : null;
}

// Server start without the SDK: spawn, write initialize at once, time to the
// first stdout line that answers it. Node's own spawn cost stays in (about
// 2 ms here: measure /bin/cat the same way for the floor).
export async function rawStart(command, args, cwd, runs) {
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {
        protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cdpgate-bench', version: '1' } } });
    const ms = [];
    for (let i = 0; i < runs; i++) {
        const t0 = now();
        const c = spawn(command, args, { cwd, stdio: ['pipe', 'pipe', 'ignore'] });
        c.stdin.on('error', () => {});
        c.stdin.write(init + '\n');
        let buf = '';
        const t = await new Promise((resolve) => {
            const timer = setTimeout(() => resolve(null), 20000);
            c.stdout.on('data', (d) => {
                buf += d;
                if (/"id"\s*:\s*1\b/.test(buf) || command === '/bin/cat') {
                    clearTimeout(timer);
                    resolve(now() - t0);
                }
            });
            c.on('exit', () => { clearTimeout(timer); resolve(null); });
        });
        if (t != null) ms.push(t);
        const pids = processTree(c.pid);
        c.stdin.end();
        await Promise.race([new Promise((r) => c.on('exit', r)), sleep(5000)]);
        await reap(pids, 2000);
    }
    return ms;
}

// ---------------------------------------------------------------------------
// One MCP server, measured. adapter = {
//   name, command, args, cwd?, env?, refRe,
//   open(url) -> {name, arguments}, snapshot(offset) -> {name, arguments},
//   click(ref, element) -> {...}, type(ref, element, text, submit) -> {...},
//   nextOffset(text) -> number|null   (paging; null when the snapshot is whole)
// }
// opts = {base, startRuns, actRuns, snapRuns, coldRuns, saveDir}
//
// Per page: open (navigate + the snapshot both servers return with it), then
// snapRuns snapshots of the unchanged page right after ("warm": a server may
// reuse what it built), one after 5 s idle on the unchanged page ("idle";
// a cache that expires by age shows here), and on big pages coldRuns
// snapshots of the same page served with `?mutate=MUTATE_MS` (serve.mjs: an
// invisible element's text changes every MUTATE_MS), each taken MUTATE_MS +
// 200 ms after the last, so the page has changed since the last observation
// ("cold"). @playwright/mcp builds every snapshot anew, so its three columns
// measure the same work.
export const MUTATE_MS = 1000;
export async function measureMcp(ad, opts) {
    const R = { server: ad.name, start_ms: [], errors: [], pages: {} };
    const connect = async () => {
        const transport = new StdioClientTransport({
            command: ad.command, args: ad.args, cwd: ad.cwd, env: { ...process.env, ...(ad.env || {}) },
            stderr: 'pipe',
        });
        let errText = '';
        const client = new Client({ name: 'cdpgate-bench', version: '1.0.0' });
        const t0 = now();
        const p = client.connect(transport);
        transport.stderr?.on('data', (d) => { if (errText.length < 4000) errText += d; });
        await p;
        return { client, transport, ms: now() - t0, err: () => errText };
    };
    const close = async (s) => {
        const pids = processTree(s.transport.pid);
        try { await s.client.close(); } catch { /* closing anyway */ }
        await reap(pids, 5000);
    };
    const call = async (s, req, timeout = 120000) => {
        const t0 = now();
        const res = await s.client.callTool(req, undefined, { timeout, maxTotalTimeout: timeout });
        const ms = now() - t0;
        const text = textOf(res);
        if (res.isError) throw new Error(`${req.name} failed: ${text.slice(0, 300)}`);
        return { ms, text, res };
    };
    const step = async (what, fn) => {
        try {
            return await fn();
        } catch (e) {
            R.errors.push(`${what}: ${String(e.message || e).split('\n')[0].slice(0, 300)}`);
            return null;
        }
    };

    // 1. Server start to initialize answered (spawn included), fresh each run.
    let s = null;
    for (let i = 0; i < opts.startRuns; i++) {
        let c;
        try {
            c = await connect();
        } catch (e) {
            R.errors.push(`start: ${e.message}`);
            break;
        }
        R.start_ms.push(c.ms);
        if (i < opts.startRuns - 1) await close(c);
        else s = c;
    }
    R.start_median_ms = median(R.start_ms);
    R.raw_start_ms = await rawStart(ad.command, ad.args, ad.cwd, opts.startRuns + 4);
    R.raw_start_median_ms = median(R.raw_start_ms);
    R.spawn_floor_ms = median(await rawStart('/bin/cat', [], undefined, 7));
    if (!s) return R;
    R.pid = s.transport.pid;
    R.idle_vmhwm_kb = vmHWM(s.transport.pid);

    // 2. tools/list: what every prompt pays.
    await step('tools/list', async () => {
        const t0 = now();
        const tl = await s.client.listTools();
        const j = JSON.stringify(tl.tools);
        R.tools = { ms: now() - t0, count: tl.tools.length, chars: j.length, tokens: tokens(j),
                    names: tl.tools.map((t) => t.name) };
    });

    // 3. Click and type latency on the action page.
    await step('act', async () => {
        const o = await call(s, ad.open(opts.base + ACT_PATH));
        R.act = { open_ms: o.ms };
        let snap = (await call(s, ad.snapshot(0))).text;
        const btn = findRef(snap, ad.refRe, 'button', 'Increment');
        const box = findRef(snap, ad.refRe, 'textbox', 'Name');
        if (!btn || !box) throw new Error(`no ref for button "Increment" / textbox "Name" in: ${snap.slice(0, 300)}`);
        const clicks = [], types = [];
        let r;
        for (let i = 0; i <= opts.actRuns; i++) {
            r = await call(s, ad.click(btn, 'Increment button'));
            if (i) clicks.push(r.ms);
        }
        R.act.click_ms = clicks;
        R.act.click_median_ms = median(clicks);
        R.act.click_result_chars = r.text.length;
        R.act.click_result_tokens = tokens(r.text);
        for (let i = 0; i <= opts.actRuns; i++) {
            r = await call(s, ad.type(box, 'Name text box', `name ${i}`, false));
            if (i) types.push(r.ms);
        }
        R.act.type_ms = types;
        R.act.type_median_ms = median(types);
        R.act.type_result_tokens = tokens(r.text);
        snap = (await call(s, ad.snapshot(0))).text;
        R.act.effect_seen = snap.includes(`Count: ${opts.actRuns + 1}`) && snap.includes(`name ${opts.actRuns}`);
        R.act_vmhwm_kb = vmHWM(s.transport.pid);
    });

    // 4. Each page: open, setup, snapshot size and latency; then every page
    //    of a paged snapshot (for the coverage check).
    for (const pg of PAGES) {
        await step(`page ${pg.id}`, async () => {
            const P = { label: pg.label };
            R.pages[pg.id] = P;
            const o = await call(s, ad.open(opts.base + pg.path));
            P.open_ms = o.ms;
            P.open_result_chars = o.text.length;
            P.open_result_tokens = tokens(o.text);
            if (pg.setup) {
                const snap = (await call(s, ad.snapshot(0))).text;
                const ref = findRef(snap, ad.refRe, pg.setup.role, pg.setup.name);
                if (!ref) throw new Error(`setup: no ref for ${pg.setup.role} "${pg.setup.name}"`);
                P.setup_type_ms = [];
                for (const t of pg.setup.texts) {
                    P.setup_type_ms.push((await call(s, ad.type(ref, pg.setup.name, t, true))).ms);
                }
            }
            const waitReady = async () => {
                if (!pg.ready) return;
                const end = Date.now() + 15000;
                for (;;) {
                    const t = (await call(s, ad.snapshot(0))).text;
                    if (t.includes(pg.ready)) break;
                    if (Date.now() > end) {
                        P.ready = false;
                        break;
                    }
                    await sleep(250);
                }
            };
            await waitReady();
            if (pg.filter && opts.actRuns) {
                // click-to-result: each filter link in turn, the result as the
                // agent reads it (tokens; cdpgate's saved for the change text)
                P.filter_ms = [];
                P.filter_results = [];
                for (let i = 0; i < Math.min(3, opts.actRuns); i++) {
                    for (const name of pg.filter) {
                        const snap = (await call(s, ad.snapshot(0))).text;
                        const ref = findRef(snap, ad.refRe, 'link', name);
                        if (!ref) throw new Error(`filter: no ref for link "${name}"`);
                        const r = await call(s, ad.click(ref, `${name} link`));
                        P.filter_ms.push(r.ms);
                        if (i === 0) P.filter_results.push({ name, tokens: tokens(r.text), text: r.text.slice(0, 600) });
                    }
                }
                P.filter_median_ms = median(P.filter_ms);
                P.filter_result_tokens = median(P.filter_results.map((x) => x.tokens));
            }
            const ms = [];
            let first;
            for (let i = 0; i < opts.snapRuns; i++) {
                first = await call(s, ad.snapshot(0), 300000);
                ms.push(first.ms);
            }
            P.snapshot_ms = ms;
            P.snapshot_median_ms = median(ms);
            P.snapshot_chars = first.text.length;
            P.snapshot_tokens = tokens(first.text);
            const all = [first.text];
            let off = ad.nextOffset(first.text);
            const pms = [];
            while (off != null && all.length < 400) {
                const n = await call(s, ad.snapshot(off), 300000);
                pms.push(n.ms);
                all.push(n.text);
                const next = ad.nextOffset(n.text);
                if (next == null || next <= off) break;
                off = next;
            }
            P.pages = all.length;
            P.all_chars = all.reduce((a, t) => a + t.length, 0);
            P.all_tokens = all.reduce((a, t) => a + tokens(t), 0);
            P.all_ms = ms[ms.length - 1] + pms.reduce((a, x) => a + x, 0);
            P.refs = all.reduce((a, t) => a + refLines(t, ad.refRe).length, 0);
            if (opts.saveDir) fs.writeFileSync(path.join(opts.saveDir, `${ad.name}-${pg.id}.txt`), all.join('\n\f\n'));
            if ((pg.big || process.env.BENCH_COLD_ALL) && opts.coldRuns) {
                await sleep(5000);
                P.idle_ms = (await call(s, ad.snapshot(0), 300000)).ms;
                const c = await call(s, ad.open(opts.base + pg.path + `?mutate=${MUTATE_MS}`));
                P.open_mutating_ms = c.ms;
                await waitReady();
                P.cold_ms = [];
                for (let i = 0; i < opts.coldRuns; i++) {
                    await sleep(MUTATE_MS + 200);
                    P.cold_ms.push((await call(s, ad.snapshot(0), 300000)).ms);
                }
                P.cold_median_ms = median(P.cold_ms);
            }
        });
    }

    // 5. Memory: peak RSS of the server process itself (VmHWM), and the
    //    current RSS summed over its process tree (the browser included).
    R.server_vmhwm_kb = vmHWM(s.transport.pid);
    // What the resident set is made of at the end: private memory (heap,
    // stacks) and pages mapped from files (the program's and its shared
    // libraries' code, shared with every process that maps them).
    R.server_rss_anon_kb = procField(s.transport.pid, 'RssAnon');
    R.server_rss_file_kb = procField(s.transport.pid, 'RssFile');
    const tree = processTree(s.transport.pid);
    R.tree_procs = tree.length;
    R.tree_rss_kb = tree.reduce((a, p) => a + (vmRSS(p) || 0), 0);
    R.stderr_tail = s.err().slice(-600);
    await close(s);
    return R;
}

export function writeJson(file, obj) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(obj, null, 1));
}
