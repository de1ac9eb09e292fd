// walker_cold.mjs — cdpgate's cold snapshot with and without the in-page
// walker beside Playwright's ariaSnapshot(), in ONE run, alternating, on the
// same browser (issue 13, point 4; docs/snapshot.md "Cold path"). Not part of
// `make bench`: run it by hand on an otherwise quiet machine.
//
//   node bench/walker_cold.mjs [SITE] [N]
//     SITE: the bench site (bench/pages.sh; default build/bench/site),
//     N: rounds per page (default 3). BENCH_PAGES=python,genindex keeps those.
//   WALK_PROFILE=1: also time the walker script alone in the page's isolated
//     world, its parts (style reads, roles, states, names, the walk) summed by
//     wrapping its global functions (the wrapping itself costs time: compare
//     the shares, not the sums, with the unwrapped run).
//
// One Chromium (playwright-core, the flags of common.mjs, a debugging port);
// cdpgate attaches with --connect and opens its own tab for each snapshot, so
// each cdpgate figure is the cold build at the open (CDPGATE_TIMING=1: the
// fetch phase and the whole build, ms). Playwright's page loads the URL once
// with ?mutate=1000 and an invisible element's text is changed before each
// ariaSnapshot(), as pw_bench.mjs coldFloor does. Medians of N.
import { spawn, execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from './peers/deps.mjs';
import { PAGES, BROWSER, BROWSER_ARGS, median, now } from './common.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
const SITE = process.argv[2] || path.join(ROOT, 'build/bench/site');
const N = Number(process.argv[3]) || 3;
const CDPGATE = process.env.CDPGATE_BIN || path.join(ROOT, 'build/cdpgate');
const BIG = PAGES.filter((p) => p.big);

function serve() {
    return new Promise((res, rej) => {
        const p = spawn('node', [path.join(HERE, 'serve.mjs'), SITE], { stdio: ['ignore', 'pipe', 'inherit'] });
        p.stdout.once('data', (d) => res({ proc: p, port: Number(String(d).trim().split(/\s+/)[0]) }));
        p.once('error', rej);
    });
}

// cdpgate snapshot URL on the attached browser: the timing line's phases.
function cdpgate(endpoint, url, walker) {
    const env = { ...process.env, CDPGATE_TIMING: '1' };
    delete env.CDPGATE_WALKER;
    if (walker)
        env.CDPGATE_WALKER = '1';
    return new Promise((res) => {
        execFile(CDPGATE, ['--connect', endpoint, 'snapshot', url], { env, maxBuffer: 1 << 28 },
            (err, out, errs) => {
                const m = /timing: snapshot (.*)/.exec(errs);
                const fb = /timing: walker fallback: (.*)/.exec(errs);
                if (err || !m) {
                    res({ error: String(err && err.message || 'no timing line').slice(0, 200) });
                    return;
                }
                const f = {};
                for (const kv of m[1].trim().split(/\s+/)) {
                    const [k, v] = kv.split('=');
                    if (!(k in f))
                        f[k] = Number(v);
                }
                const c = /nodes=(\d+) lines=(\d+)/.exec(m[1]);
                res({ counters: f.counters, fetch: f.fetch, total: f.total_ms, lines: c ? Number(c[2]) : null,
                      fallback: fb ? fb[1] : null });
            });
    });
}

// The walker's four scripts, read from page_walk.c's C string literals.
// WALK_OLD=FILE: also time the walker alone as another page_walk.c has it
// (e.g. git show main:snapshot/page_walk.c), alternating with this one.
export function walkerScripts(file) {
    const src = fs.readFileSync(file || path.join(ROOT, 'snapshot/page_walk.c'), 'utf8');
    const out = [];
    for (const m of src.matchAll(/const char (snap_js_walk_(?:def\d|expr))\[\] =([\s\S]*?);\n/g)) {
        let s = '';
        for (const lit of m[2].matchAll(/"((?:[^"\\]|\\.)*)"/g))
            s += JSON.parse('"' + lit[1] + '"');
        out.push(s);
    }
    return out;
}

const PROFILE_WRAP = `(function(){
['w_cs','w_role','w_st','w_txt','w_secret','w_ctlVal','w_data','w_kids','w_content','w_native','w_labelsOf']
.forEach(function(k){var f=globalThis[k];if(!f||f.__w)return;var g=function(){var t=performance.now(),r=f.apply(this,arguments);
var d=performance.now()-t,P=globalThis.__wprof,e=P[k]||(P[k]={n:0,ms:0});e.n++;e.ms+=d;return r;};g.__w=1;globalThis[k]=g;});})()`;

async function walkerAlone(cdp, world, profile, file) {
    const S = walkerScripts(file);
    const ev = (expression) => cdp.send('Runtime.evaluate', { expression, contextId: world, returnByValue: true });
    for (let i = 0; i < 3; i++)
        await ev(S[i]);
    if (profile)
        await ev(PROFILE_WRAP + ';globalThis.__wprof={}');
    const t = now();
    const r = await ev(S[3]);
    const ms = now() - t;
    const out = r.result && r.result.value || '';
    let prof = null;
    if (profile)
        prof = (await ev('JSON.stringify(globalThis.__wprof)')).result.value;
    // Re-declare the functions unwrapped for the next round.
    for (let i = 0; i < 3; i++)
        await ev(S[i]);
    return { ms, bytes: out.length, records: out.split('\n').length - 1, prof };
}

async function main() {
    const { proc: server, port } = await serve();
    const dport = 9400 + Math.floor(Math.random() * 500);
    const browser = await chromium.launch({ executablePath: BROWSER,
        args: [...BROWSER_ARGS, `--remote-debugging-port=${dport}`] });
    const endpoint = `http://127.0.0.1:${dport}`;
    const results = {};
    try {
        for (const pg of BIG) {
            const url = `http://127.0.0.1:${port}${pg.path}?mutate=1000`;
            const page = await browser.newPage();
            await page.goto(url, { waitUntil: 'load', timeout: 120000 });
            const cdp = await page.context().newCDPSession(page);
            const tree = await cdp.send('Page.getFrameTree');
            const { executionContextId: world } = await cdp.send('Page.createIsolatedWorld',
                { frameId: tree.frameTree.frame.id, worldName: 'walker_cold' });
            const touch = () => page.evaluate(() => {
                let d = document.getElementById('__cdpgate_bench_touch');
                if (!d) {
                    d = document.createElement('span');
                    d.id = '__cdpgate_bench_touch';
                    d.style.display = 'none';
                    document.body.appendChild(d);
                }
                d.textContent = String(Math.random());
            });
            const R = { ax: [], walker: [], pw: [], alone: [], alone_old: [], dsnap: [] };
            for (let i = 0; i < N; i++) {
                R.ax.push(await cdpgate(endpoint, url, false));
                R.walker.push(await cdpgate(endpoint, url, true));
                await touch();
                let t = now();
                await page.locator('body').ariaSnapshot({ timeout: 120000 });
                R.pw.push(now() - t);
                await touch();
                R.alone.push(await walkerAlone(cdp, world, false));
                if (process.env.WALK_OLD) {
                    await touch();
                    R.alone_old.push(await walkerAlone(cdp, world, false, process.env.WALK_OLD));
                }
                await touch();
                t = now();
                await cdp.send('DOMSnapshot.captureSnapshot', { computedStyles: [] });
                R.dsnap.push(now() - t);
            }
            if (process.env.WALK_PROFILE === '1') {
                await touch();
                R.profile = await walkerAlone(cdp, world, true);
            }
            await cdp.detach();
            await page.close();
            const med = (a, k) => median(a.map((x) => k ? x[k] : x));
            results[pg.id] = {
                ax_counters: med(R.ax, 'counters'), walker_counters: med(R.walker, 'counters'),
                ax_fetch: med(R.ax, 'fetch'), ax_total: med(R.ax, 'total'), ax_lines: med(R.ax, 'lines'),
                walker_fetch: med(R.walker, 'fetch'), walker_total: med(R.walker, 'total'),
                walker_lines: med(R.walker, 'lines'),
                walker_fallback: R.walker.map((x) => x.fallback || x.error).filter(Boolean),
                ax_errors: R.ax.map((x) => x.error).filter(Boolean),
                pw_aria: med(R.pw), walker_alone: med(R.alone, 'ms'),
                walker_alone_old: med(R.alone_old, 'ms'), walker_bytes: med(R.alone, 'bytes'), walker_records: med(R.alone, 'records'),
                dom_snapshot: med(R.dsnap),
                walker_total_per_pw: null, raw: R,
            };
            const x = results[pg.id];
            x.walker_total_per_pw = x.walker_total && x.pw_aria ? +(x.walker_total / x.pw_aria).toFixed(2) : null;
            const { raw, ...brief } = x;
            console.log(pg.id, JSON.stringify(brief));
            if (R.profile)
                console.log(pg.id, 'profile', R.profile.ms.toFixed(0), 'ms', R.profile.prof);
        }
    } finally {
        await browser.close();
        server.kill();
    }
    const outFile = process.env.WALK_OUT;
    if (outFile)
        fs.writeFileSync(outFile, JSON.stringify(results, null, 1));
}

// Run only as a script (walkerScripts is also imported).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url))
    await main();
