// a11y_pwprobe.mjs — why @axe-core/playwright misses a frame's violations
// (docs/a11y.md, "Conformance"): runs AxeBuilder.analyze() on URL as
// a11y_bench.mjs does, with its frame steps instrumented: the frames the
// page has, each child frame's injection (AxeBuilder.inject races the
// script's evaluation against a 1 s timer and runPartialRecursive drops
// the frame silently when it loses), and the violations found.
//   node bench/a11y_pwprobe.mjs URL [INJECT_MS]
// INJECT_MS (optional): replace the 1 s race by this many ms (a patched
// copy of inject), to show the frame is found when the race is not lost.
// PROBE_OUT=FILE: axe's results written there. The window is
// a11y_bench.mjs's (1280x720, viewport: null).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { BROWSER, BROWSER_ARGS, now } from './common.mjs';
import { chromium } from './peers/deps.mjs';

const [url, injectMs] = process.argv.slice(2);
const here = path.dirname(new URL(import.meta.url).pathname);
const req = createRequire(path.join(here, 'peers/package.json'));
const { AxeBuilder } = req('@axe-core/playwright');
const AXE = path.join(here, 'peers/node_modules/axe-core/axe.min.js');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa'];
const log = (...a) => console.log(...a);

const proto = AxeBuilder.prototype;
const origInject = proto.inject;
proto.inject = async function (frames, shouldThrow) {
    for (const f of frames) {
        const t0 = now();
        try {
            if (injectMs) {
                const race = new Promise((_, rej) => setTimeout(() => rej(new Error('Script Timeout')), Number(injectMs)));
                await Promise.race([f.evaluate(this.script()), race]);
                await f.evaluate(await this.axeConfigure());
            } else {
                await origInject.call(this, [f], shouldThrow);
            }
            log(`inject ${f.url()}: ok in ${(now() - t0).toFixed(0)} ms`);
        } catch (e) {
            log(`inject ${f.url()}: FAILED after ${(now() - t0).toFixed(0)} ms: ${e.message}`);
            throw e;
        }
    }
};

const udd = fs.mkdtempSync(path.join(os.tmpdir(), 'cdpgate-a11y-probe-'));
const ctx = await chromium.launchPersistentContext(udd, {
    executablePath: BROWSER, headless: true, chromiumSandbox: false, viewport: null,
    args: [...BROWSER_ARGS, '--host-resolver-rules=MAP *.test 127.0.0.1', '--site-per-process',
        '--window-size=1280,720'],
});
try {
    const page = await ctx.newPage();
    await page.goto(url, { waitUntil: 'load' });
    log('frames:', page.frames().map((f) => f.url()).join(' | '));
    const t0 = now();
    const res = await new AxeBuilder({ page, axeSource: fs.readFileSync(AXE, 'utf8') }).withTags(TAGS).analyze();
    log(`analyze: ${(now() - t0).toFixed(0)} ms; violations:`,
        res.violations.map((v) => `${v.id}:${v.nodes.length}`).join(','));
    if (process.env.PROBE_OUT) fs.writeFileSync(process.env.PROBE_OUT, JSON.stringify(res));
} finally {
    await ctx.close();
    fs.rmSync(udd, { recursive: true, force: true });
}
