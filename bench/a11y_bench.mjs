// a11y_bench.mjs — issue 16, point 5: cdpgate's accessibility scan beside
// @axe-core/playwright on the same pages, in the same run, with the same
// axe-core file (bench/peers/node_modules/axe-core/axe.min.js, 4.14.1) and
// the same tags (wcag2a, wcag2aa, wcag21aa, wcag22aa):
//   - conformance: each side's violations as rule id -> element count; the
//     page matches when both have the same ids with the same counts;
//   - time: the scan alone, median of N runs per page. cdpgate: the
//     `timing: a11y ... axe_ms=` line of `cdpgate a11y` (snap_axe_run: every
//     frame, both phases, finishRun; not the browser's start, the page's
//     load, refs, crops or files); @axe-core/playwright: AxeBuilder.analyze()
//     on a loaded page (its non-legacy mode: runPartial per frame, finishRun
//     in a new blank page). The ratio is cdpgate / playwright (target <= 1).
// Nothing is asserted (figures are printed, the JSON is written).
//
//   node bench/a11y_bench.mjs CDPGATE OUT.json ID=URL...
// Env: BENCH_A11Y_N (runs per page and side, default 3; BENCH_QUICK=1: 1),
// CDPGATE_BROWSER (default /usr/bin/chromium). Without bench/peers
// (bench/smoke.sh in CI) only cdpgate's side runs and the peer's columns are
// '-'; the axe file is then tests/peers' (same version).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { BROWSER, BROWSER_ARGS, median, now } from './common.mjs';
import { chromium } from './peers/deps.mjs';

const [bin, outPath, ...specs] = process.argv.slice(2);
if (!bin || !outPath || !specs.length) {
    console.error('usage: node bench/a11y_bench.mjs CDPGATE OUT.json ID=URL...');
    process.exit(2);
}
const N = Number(process.env.BENCH_A11Y_N || (process.env.BENCH_QUICK === '1' ? 1 : 3));
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa'];
// Every *.test host on loopback: a.test and b.test are two sites, so a frame
// of one in the other is out of process (--site-per-process).
const HOST_RULES = '--host-resolver-rules=MAP *.test 127.0.0.1';
// One window size for both sides: cdpgate's headless window is Chromium's
// default (a 780x493 viewport) and playwright emulates a 1280x720 viewport
// unless told otherwise; axe's layout-dependent rules (target-size,
// color-contrast of what is on screen) then see two different pages. Both
// launch with this window and playwright keeps it (viewport: null).
const WINDOW = '--window-size=1280,720';
const here = path.dirname(new URL(import.meta.url).pathname);
const AXE = [path.join(here, 'peers/node_modules/axe-core/axe.min.js'),
    path.join(here, '../tests/peers/node_modules/axe-core/axe.min.js')].find((p) => fs.existsSync(p));
if (!AXE) {
    console.error('a11y_bench: no axe-core (npm install in bench/peers or sh tests/setup.sh)');
    process.exit(1);
}

let AxeBuilder = null;
try {
    const req = createRequire(path.join(here, 'peers/package.json'));
    AxeBuilder = req('@axe-core/playwright').AxeBuilder;
} catch {
    AxeBuilder = null;
}

function violationsOf(results) {
    const m = {};
    for (const v of results.violations || []) m[v.id] = v.nodes.length;
    return m;
}

function sameViolations(a, b) {
    const ka = Object.keys(a).sort(), kb = Object.keys(b).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

function diff(a, b) {
    const out = [];
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)]))
        if (a[k] !== b[k]) out.push(`${k}: cdpgate ${a[k] ?? 0}, playwright ${b[k] ?? 0}`);
    return out;
}

// One `cdpgate a11y URL -o DIR` run: its scan time and violations.
function cdpgateScan(url) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdpgate-a11y-bench-'));
    const r = spawnSync(bin, ['--browser-arg', HOST_RULES, '--browser-arg', '--site-per-process',
        '--browser-arg', WINDOW, 'a11y', url, '-o', dir, '--axe', AXE], {
        encoding: 'utf8', env: { ...process.env, CDPGATE_TIMING: '1' }, timeout: 300000,
    });
    try {
        const m = /timing: a11y .*axe_ms=([0-9.]+)/.exec(r.stderr || '');
        if (r.status !== 0 || !m)
            return { error: `exit ${r.status}: ${(r.stderr || '').split('\n').filter((l) =>
                !l.startsWith('timing:')).join(' ').slice(0, 300)}` };
        const results = JSON.parse(fs.readFileSync(path.join(dir, 'a11y.json'), 'utf8'));
        return { ms: Number(m[1]), violations: violationsOf(results),
                 notEvaluated: results.notEvaluated.length };
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

async function pwScans(url) {
    const udd = fs.mkdtempSync(path.join(os.tmpdir(), 'cdpgate-a11y-pw-'));
    const ctx = await chromium.launchPersistentContext(udd, {
        executablePath: BROWSER, headless: true, chromiumSandbox: false, viewport: null,
        args: [...BROWSER_ARGS, HOST_RULES, '--site-per-process', WINDOW],
    });
    const runs = [];
    const axeSource = fs.readFileSync(AXE, 'utf8');
    try {
        for (let i = 0; i < N; i++) {
            const page = await ctx.newPage();
            try {
                await page.goto(url, { waitUntil: 'load' });
                const t0 = now();
                const results = await new AxeBuilder({ page, axeSource }).withTags(TAGS).analyze();
                runs.push({ ms: now() - t0, violations: violationsOf(results) });
            } catch (e) {
                runs.push({ error: String(e && e.message || e).split('\n')[0].slice(0, 300) });
            }
            await page.close();
        }
    } finally {
        await ctx.close();
        fs.rmSync(udd, { recursive: true, force: true });
    }
    return runs;
}

const out = { axe: AXE, tags: TAGS, n: N, pages: [] };
for (const spec of specs) {
    const eq = spec.indexOf('=');
    const id = spec.slice(0, eq), url = spec.slice(eq + 1);
    const mine = [];
    for (let i = 0; i < N; i++) mine.push(cdpgateScan(url));
    const theirs = AxeBuilder && chromium ? await pwScans(url) : [];
    const okMine = mine.filter((r) => !r.error), okTheirs = theirs.filter((r) => !r.error);
    const row = {
        id, url,
        cdpgate: { ms: median(okMine.map((r) => r.ms)), violations: okMine[0]?.violations ?? null,
                   notEvaluated: okMine[0]?.notEvaluated ?? null,
                   errors: mine.filter((r) => r.error).map((r) => r.error) },
        playwright: theirs.length ? { ms: median(okTheirs.map((r) => r.ms)),
                                      violations: okTheirs[0]?.violations ?? null,
                                      errors: theirs.filter((r) => r.error).map((r) => r.error) }
                                  : null,
    };
    if (row.cdpgate.violations && row.playwright?.violations) {
        row.match = sameViolations(row.cdpgate.violations, row.playwright.violations);
        row.differences = diff(row.cdpgate.violations, row.playwright.violations);
    }
    if (row.cdpgate.ms && row.playwright?.ms) row.ratio = row.cdpgate.ms / row.playwright.ms;
    out.pages.push(row);
}
fs.writeFileSync(outPath, JSON.stringify(out, null, 2) + '\n');

const f = (x) => (typeof x === 'number' ? x.toFixed(0) : '-');
console.log(`a11y scans, axe-core ${path.relative(process.cwd(), AXE)}, tags ${TAGS.join(',')},` +
    ` median of ${N} (ms: the scan alone)`);
console.log('page'.padEnd(12) + 'cdpgate'.padStart(9) + 'playwright'.padStart(12) + 'ratio'.padStart(7) +
    '  violations (rule:elements)                              same?');
for (const r of out.pages) {
    const v = r.cdpgate.violations ? Object.entries(r.cdpgate.violations).map(([k, n]) => `${k}:${n}`)
        .join(',') : r.cdpgate.errors.join('; ');
    console.log(r.id.padEnd(12) + f(r.cdpgate.ms).padStart(9) + f(r.playwright?.ms).padStart(12) +
        (r.ratio ? r.ratio.toFixed(2) : '-').padStart(7) + '  ' + v.slice(0, 56).padEnd(57) +
        (r.match === undefined ? '-' : r.match ? 'yes' : 'NO'));
    for (const d of r.differences || []) console.log(' '.repeat(14) + 'differs: ' + d);
    for (const e of r.playwright?.errors || []) console.log(' '.repeat(14) + 'playwright: ' + e);
    if (r.cdpgate.notEvaluated) console.log(' '.repeat(14) + `cdpgate: ${r.cdpgate.notEvaluated} not evaluated`);
}
const bad = out.pages.filter((r) => r.cdpgate.errors.length && !r.cdpgate.violations);
process.exit(bad.length ? 1 : 0);
