// sweep_bench.mjs — issue 16, point 4: `cdpgate a11y --sweep` over the same
// targets with --jobs 2 and one after another (--jobs 1), wall time of the
// whole command each (one browser shared by the sweep, a browser context per
// target, since 8706de2; the browser's start included). Target:
// jobs 2 at most 0.6x the time of one after another. Nothing is asserted
// (figures are printed, the JSON is written); exit 1 only when a sweep did
// not finish every target.
//
// Also printed: the CPU time of each sweep (user + sys of cdpgate and the
// browser it launched and waited for: /proc/self/stat's cutime + cstime
// around the run) and, from it, the floor no scheduler can beat on this
// machine: the sweep's CPU time over (cores x the one-after-another wall
// time). A browser uses more than one core for one target (its browser,
// renderer, compositor and I/O threads and processes at once); on tiny
// pages (the fixture pages) that floor is near 0.7x on 2 cores (session 20),
// on real pages (one target's axe run keeps one renderer busy) about 0.55x.
//
//   node bench/sweep_bench.mjs CDPGATE OUT.json N URL...
// N targets, the URLs taken in turn (each with ?sweep=i, so each target is
// its own page load). Env: BENCH_QUICK=1 (nothing changes but the caller's
// N), CDPGATE_BROWSER.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { now } from './common.mjs';

// This process's waited-for children's CPU seconds (user + sys).
function childCpu() {
    try {
        const f = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
        return (Number(f[13]) + Number(f[14])) / 100;  // cutime, cstime (USER_HZ 100)
    } catch {
        return NaN;
    }
}

const [bin, outPath, nArg, ...urls] = process.argv.slice(2);
const N = Number(nArg);
if (!bin || !outPath || !(N > 0) || !urls.length) {
    console.error('usage: node bench/sweep_bench.mjs CDPGATE OUT.json N URL...');
    process.exit(2);
}
const HOST_RULES = '--host-resolver-rules=MAP *.test 127.0.0.1';
const here = path.dirname(new URL(import.meta.url).pathname);
const AXE = [path.join(here, 'peers/node_modules/axe-core/axe.min.js'),
    path.join(here, '../tests/peers/node_modules/axe-core/axe.min.js')].find((p) => fs.existsSync(p));
if (!AXE) {
    console.error('sweep_bench: no axe-core (npm install in bench/peers or sh tests/setup.sh)');
    process.exit(1);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cdpgate-sweep-bench-'));
const targets = path.join(dir, 'targets.jsonl');
const lines = [];
for (let i = 0; i < N; i++) {
    const u = urls[i % urls.length];
    lines.push(JSON.stringify({ id: `s${String(i + 1).padStart(2, '0')}`,
        url: `${u}${u.includes('?') ? '&' : '?'}sweep=${i + 1}` }));
}
fs.writeFileSync(targets, lines.join('\n') + '\n');

// One sweep into a fresh directory: wall ms, and the index's counts.
function sweep(jobs) {
    const out = path.join(dir, `jobs${jobs}`);
    const c0 = childCpu();
    const t0 = now();
    const r = spawnSync(bin, ['--browser-arg', HOST_RULES, '--browser-arg', '--site-per-process',
        'a11y', '--sweep', targets, '-o', out, '--jobs', String(jobs), '--axe', AXE], {
        encoding: 'utf8', timeout: 1800000,
    });
    const ms = now() - t0;
    const cpu = childCpu() - c0;
    let index = null;
    try {
        index = JSON.parse(fs.readFileSync(path.join(out, 'index.json'), 'utf8'));
    } catch {
        index = null;
    }
    return { jobs, ms, cpu, status: r.status, done: index ? index.done : 0,
        elements: index ? index.violations.elements : null,
        stderr: r.status === 0 ? undefined : (r.stderr || '').slice(-2000) };
}

const serial = sweep(1);
const par = sweep(2);
const ratio = par.ms / serial.ms;
const ok = serial.done === N && par.done === N;
const cores = os.availableParallelism ? os.availableParallelism() : os.cpus().length;
const floor = serial.cpu / (Math.min(cores, 2) * serial.ms / 1000);
console.log(`  sweep of ${N} targets (one shared browser, a context each): one after another ${serial.ms.toFixed(0)} ms,` +
    ` --jobs 2 ${par.ms.toFixed(0)} ms: ${ratio.toFixed(2)}x (target: at most 0.6x)` +
    `${ok ? '' : `; NOT ALL DONE: ${serial.done}/${N} and ${par.done}/${N}`}`);
console.log(`    CPU time: one after another ${serial.cpu.toFixed(1)} s (${(serial.cpu / serial.ms * 1000).toFixed(2)} cores busy),` +
    ` --jobs 2 ${par.cpu.toFixed(1)} s (${(par.cpu / par.ms * 1000).toFixed(2)} cores); ${cores} cores here:` +
    ` no schedule of 2 jobs can beat ${floor.toFixed(2)}x on this machine`);
if (serial.elements !== par.elements)
    console.log(`  the two sweeps found different element counts: ${serial.elements} vs ${par.elements}`);
fs.writeFileSync(outPath, JSON.stringify({ targets: N, serial, jobs2: par, ratio, cores,
    cpu_floor: floor }, null, 1) + '\n');
fs.rmSync(dir, { recursive: true, force: true });
process.exit(ok ? 0 : 1);
