// mcp_bench.mjs — `cdpgate mcp` measured by common.mjs's measureMcp through
// the official SDK client, exactly as pw_bench.mjs measures @playwright/mcp:
// start to initialize answered, tools/list size, click and type latency,
// snapshot size and latency on every page, the whole paged element list
// (saved for the coverage check), and the server's peak RSS (VmHWM of the
// cdpgate process itself; the browser is reported apart, as for the peer).
//
//   node bench/mcp_bench.mjs BASE_URL OUT.json [SAVE_DIR]
// Environment: CDPGATE_BIN (default build/cdpgate), BENCH_WINDOW (browser window,
// default 1280,720), BENCH_MCP_ACT_N (default 5),
// BENCH_SNAP_N (default 3), BENCH_COLD_N (cold snapshots on big pages, default 3), BENCH_START_N (default 7).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { measureMcp, tokensEstimated, writeJson } from './common.mjs';

const [base, out, saveDir] = process.argv.slice(2);
if (!base || !out) {
    console.error('usage: node bench/mcp_bench.mjs BASE_URL OUT.json [SAVE_DIR]');
    process.exit(2);
}
const env = (k, d) => Number(process.env[k] || d);
const bin = path.resolve(process.env.CDPGATE_BIN || 'build/cdpgate');

const result = { bin, version: null, mcp: null };
const v = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 5000 });
result.version = (v.stdout || '').trim() || null;
// Is `cdpgate mcp` there yet? With stdin at EOF a server exits at once.
const probe = spawnSync(bin, ['mcp'], { input: '', encoding: 'utf8', timeout: 10000 });
if (probe.error || /unknown command/i.test(probe.stderr || '')) {
    result.unavailable = probe.error ? String(probe.error.message)
        : (probe.stderr || '').trim().split('\n')[0];
} else {
    result.mcp = await measureMcp({
        name: 'cdpgate',
        command: bin,
        // Pages lay out at the width of Playwright's default 1280x720 viewport
        // (headless Chromium's own default window is 800x600).
        args: ['--browser-arg', `--window-size=${process.env.BENCH_WINDOW || '1280,720'}`, 'mcp'],
        refRe: /\[(e\d+)\]/,
        open: (url) => ({ name: 'browser_open', arguments: { url } }),
        snapshot: (offset) => ({ name: 'browser_snapshot', arguments: offset ? { offset } : {} }),
        click: (ref) => ({ name: 'browser_click', arguments: { ref } }),
        type: (ref, element, text, submit) =>
            ({ name: 'browser_type', arguments: submit ? { ref, text, submit } : { ref, text } }),
        nextOffset: (text) => {
            const m = text.match(/^\[more\].*?\boffset=(\d+)/m);
            return m ? Number(m[1]) : null;
        },
    }, {
        base, saveDir,
        startRuns: env('BENCH_START_N', 7), actRuns: env('BENCH_MCP_ACT_N', 5),
        snapRuns: env('BENCH_SNAP_N', 3), coldRuns: env('BENCH_COLD_N', 3),
    });
}
if (tokensEstimated)
    result.tokens_estimated = true;   // no bench peers: 4 characters a token
writeJson(out, result);
