// node_rtt.js — the peer for the round-trip benchmark: Node's `ws` client
// against the same browser, same page setup, same command.
//   node bench/node_rtt.js WS_URL N       -> prints "median_us p90_us"
//   node bench/node_rtt.js WS_URL N raw   -> prints each call's time (us)
const WebSocket = require(require('path').join(__dirname, '../tests/peers/node_modules/ws'));
const [url, nStr, mode] = process.argv.slice(2);
const N = parseInt(nStr || '2000', 10);
const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 30 });
let id = 0;
const waiting = new Map();
ws.on('message', (d) => {
  const m = JSON.parse(d.toString());
  if (m.id && waiting.has(m.id)) { const f = waiting.get(m.id); waiting.delete(m.id); f(m); }
});
function call(method, params, sessionId) {
  return new Promise((res) => {
    const mid = ++id;
    waiting.set(mid, res);
    const msg = { id: mid, method, params };
    if (sessionId) msg.sessionId = sessionId;
    ws.send(JSON.stringify(msg));
  });
}
ws.on('open', async () => {
  const t = await call('Target.createTarget', { url: 'about:blank' });
  const a = await call('Target.attachToTarget', { targetId: t.result.targetId, flatten: true });
  const sid = a.result.sessionId;
  for (let i = 0; i < 50; i++) await call('Runtime.evaluate', { expression: '1' }, sid);
  const times = [];
  for (let i = 0; i < N; i++) {
    const t0 = process.hrtime.bigint();
    await call('Runtime.evaluate', { expression: '1' }, sid);
    times.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  await call('Target.closeTarget', { targetId: t.result.targetId });
  if (mode === 'raw') {
    process.stdout.write(times.map((x) => x.toFixed(1)).join(' ') + '\n');
    ws.close();
    return;
  }
  times.sort((x, y) => x - y);
  process.stdout.write(`${times[N >> 1].toFixed(1)} ${times[Math.floor(N * 0.9)].toFixed(1)}\n`);
  ws.close();
});
