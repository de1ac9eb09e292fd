// pw_bench.mjs — the Playwright side of `make bench`, writing JSON to OUT:
//   - playwright-core (library) driving /usr/bin/chromium: click and fill
//     latency medians on the action page, and ariaSnapshot latency per page;
//   - the reference list of actionable elements on every page, read from the
//     browser's own accessibility tree (Accessibility.getFullAXTree): the
//     coverage check in compare.mjs looks for each of them in the snapshots;
//   - @playwright/mcp spawned over stdio and measured by common.mjs's
//     measureMcp, exactly as mcp_bench.mjs measures `cdpgate mcp`.
//
//   node bench/pw_bench.mjs BASE_URL OUT.json [SAVE_DIR]
// Environment: BENCH_ACT_N (library clicks/fills, default 50),
// BENCH_MCP_ACT_N (MCP clicks/types, default 5), BENCH_SNAP_N (default 3), BENCH_COLD_N (cold snapshots on big pages, default 3),
// BENCH_START_N (server starts, default 7), BENCH_SKIP_LIB=1, BENCH_SKIP_MCP=1.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from './peers/deps.mjs';
import { BROWSER, BROWSER_ARGS, PAGES, ACT_PATH, median, now, measureMcp, writeJson } from './common.mjs';

const [base, out, saveDir] = process.argv.slice(2);
if (!base || !out) {
    console.error('usage: node bench/pw_bench.mjs BASE_URL OUT.json [SAVE_DIR]');
    process.exit(2);
}
const env = (k, d) => Number(process.env[k] || d);
const here = path.dirname(fileURLToPath(import.meta.url));
const result = { versions: {}, lib: {}, actionable: {}, mcp: null };
for (const p of ['playwright-core', '@playwright/mcp']) {
    result.versions[p] = JSON.parse(fs.readFileSync(path.join(here, 'peers/node_modules', p, 'package.json'))).version;
}

// Roles an agent can act on. Options of a native <select> are excluded (the
// select itself is the control), as are nodes the browser ignores (hidden).
const ACTIONABLE = new Set(['link', 'button', 'textbox', 'searchbox', 'combobox', 'listbox',
    'checkbox', 'radio', 'switch', 'slider', 'spinbutton', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'treeitem', 'DisclosureTriangle', 'PopUpButton', 'ToggleButton']);

async function actionable(page) {
    const cdp = await page.context().newCDPSession(page);
    const { nodes } = await cdp.send('Accessibility.getFullAXTree');
    await cdp.detach();
    const byId = new Map(nodes.map((n) => [n.nodeId, n]));
    const prop = (n, k) => (n.properties || []).find((p) => p.name === k)?.value?.value;
    const out = [];
    for (const n of nodes) {
        if (n.ignored) continue;
        const role = n.role?.value || '';
        const editable = prop(n, 'editable') && prop(n, 'focusable');
        if (!ACTIONABLE.has(role) && !editable) continue;
        if (role === 'option') {
            // a native <select>'s options sit under combobox > MenuListPopup
            // (which the tree may mark ignored)
            let a = byId.get(n.parentId), inSelect = false;
            for (let i = 0; a && i < 4; i++, a = byId.get(a.parentId)) {
                if (/^(MenuListPopup|combobox)$/.test(a.role?.value || '')) inSelect = true;
            }
            if (inSelect) continue;
        }
        if (role === 'textbox' || role === 'searchbox' || editable) {
            // the editable root only, not its descendants
            const parent = byId.get(n.parentId);
            if (parent && prop(parent, 'editable') && prop(parent, 'focusable')) continue;
        }
        out.push({ role: editable && !ACTIONABLE.has(role) ? 'editable' : role,
                   name: String(n.name?.value || '').replace(/\s+/g, ' ').trim() });
    }
    const dom = await page.evaluate(() => {
        const sel = 'a[href],button,input:not([type=hidden]),select,textarea,summary,' +
            '[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],' +
            '[role=option],[role=switch],[role=treeitem],[contenteditable=""],[contenteditable=true]';
        const all = [...document.querySelectorAll(sel)];
        return { all: all.length, visible: all.filter((e) => e.checkVisibility()).length };
    });
    return { elements: out, dom_all: dom.all, dom_visible: dom.visible };
}

// The browser's own share of a cold cdpgate snapshot (issue 13, point 4d):
// the two requests a build sends per frame (DOMSnapshot.captureSnapshot and
// Accessibility.getFullAXTree, pipelined as observe_cache.c sends them)
// over a CDP session, no cdpgate code in the timed part, alternating with
// Playwright's ariaSnapshot on the same page, an invisible element's text
// changed before each call (as serve.mjs ?mutate does). Their ratio is the
// least cdpgate's cold ratio can be while getFullAXTree is its source
// (docs/snapshot.md, "Cold path").
async function coldFloor(page, n) {
    const cdp = await page.context().newCDPSession(page);
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
    const fetch = [], aria = [];
    try {
        for (let i = 0; i < n; i++) {
            await touch();
            let t = now();
            await Promise.all([cdp.send('DOMSnapshot.captureSnapshot', { computedStyles: [] }),
                cdp.send('Accessibility.getFullAXTree')]);
            fetch.push(now() - t);
            await touch();
            t = now();
            await page.locator('body').ariaSnapshot({ timeout: 120000 });
            aria.push(now() - t);
        }
    } finally {
        await cdp.detach();
    }
    return { fetch_ms: fetch, fetch_median_ms: median(fetch), aria_ms: aria, aria_median_ms: median(aria) };
}

async function setupPage(page, pg) {
    if (pg.setup) {
        const box = page.getByRole(pg.setup.role, { name: pg.setup.name });
        for (const t of pg.setup.texts) {
            await box.fill(t);
            await box.press('Enter');
        }
    }
    if (pg.ready) await page.getByText(pg.ready).first().waitFor({ timeout: 15000 });
}

async function library() {
    const nAct = env('BENCH_ACT_N', 50), nSnap = env('BENCH_SNAP_N', 3);
    const udd = fs.mkdtempSync(path.join(os.tmpdir(), 'cdpgate-bench-pw-'));
    const t0 = now();
    const ctx = await chromium.launchPersistentContext(udd, {
        executablePath: BROWSER, headless: true, chromiumSandbox: false, args: BROWSER_ARGS,
    });
    result.lib.launch_ms = now() - t0;
    try {
        const page = ctx.pages()[0] || await ctx.newPage();
        await page.goto(base + ACT_PATH);
        const btn = page.getByRole('button', { name: 'Increment' });
        const box = page.getByRole('textbox', { name: 'Name' });
        const clicks = [], fills = [];
        for (let i = -5; i < nAct; i++) {
            const t = now();
            await btn.click();
            if (i >= 0) clicks.push(now() - t);
        }
        for (let i = -5; i < nAct; i++) {
            const t = now();
            await box.fill(`name ${i}`);
            if (i >= 0) fills.push(now() - t);
        }
        result.lib.click_median_ms = median(clicks);
        result.lib.fill_median_ms = median(fills);
        result.lib.n = nAct;
        result.lib.effect_seen = (await page.locator('#count').textContent()) === `Count: ${nAct + 5}`;

        result.lib.aria_snapshot = {};
        result.lib.cold_floor = {};
        for (const pg of PAGES) {
            try {
                await page.goto(base + pg.path);
                await setupPage(page, pg);
                const ms = [];
                let snap = '';
                for (let i = 0; i < nSnap; i++) {
                    const t = now();
                    snap = await page.locator('body').ariaSnapshot({ timeout: 120000 });
                    ms.push(now() - t);
                }
                result.lib.aria_snapshot[pg.id] = { median_ms: median(ms), chars: snap.length };
                if (pg.big) result.lib.cold_floor[pg.id] = await coldFloor(page, nSnap);
                result.actionable[pg.id] = await actionable(page);
            } catch (e) {
                result.actionable[pg.id] = { error: String(e.message).split('\n')[0] };
            }
        }
    } finally {
        await ctx.close();
        fs.rmSync(udd, { recursive: true, force: true });
    }
}

async function playwrightMcp() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdpgate-bench-pwmcp-'));
    const cfg = path.join(dir, 'config.json');
    fs.writeFileSync(cfg, JSON.stringify({
        browser: {
            browserName: 'chromium',
            userDataDir: path.join(dir, 'profile'),
            launchOptions: { executablePath: BROWSER, headless: true, chromiumSandbox: false, args: BROWSER_ARGS },
        },
        outputDir: path.join(dir, 'out'),
    }));
    try {
        return await measureMcp({
            name: 'playwright-mcp',
            command: process.execPath,
            args: [path.join(here, 'peers/node_modules/@playwright/mcp/cli.js'), '--config', cfg],
            cwd: dir,
            refRe: /\[ref=([a-z0-9]+)\]/,
            open: (url) => ({ name: 'browser_navigate', arguments: { url } }),
            snapshot: () => ({ name: 'browser_snapshot', arguments: {} }),
            click: (ref, element) => ({ name: 'browser_click', arguments: { element, target: ref } }),
            type: (ref, element, text, submit) =>
                ({ name: 'browser_type', arguments: { element, target: ref, text, submit } }),
            nextOffset: () => null,
        }, {
            base, saveDir,
            startRuns: env('BENCH_START_N', 7), actRuns: env('BENCH_MCP_ACT_N', 5),
            snapRuns: env('BENCH_SNAP_N', 3), coldRuns: env('BENCH_COLD_N', 3),
        });
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

if (!process.env.BENCH_SKIP_LIB) {
    try {
        await library();
    } catch (e) {
        result.lib.error = String(e.message).split('\n')[0];
    }
}
if (!process.env.BENCH_SKIP_MCP) result.mcp = await playwrightMcp();
writeJson(out, result);
