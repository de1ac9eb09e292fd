// cdp_proxy.js — a test-only CDP endpoint in front of a real browser.
//
//   node cdp_proxy.js UPSTREAM_WS_URL MODE
//
// Serves /json/version (pointing at itself) and a WebSocket endpoint at
// /devtools/browser/proxy that relays to UPSTREAM_WS_URL. Prints its port on
// stdout. MODE changes what it does:
//   electron  refuse Target.createTarget like an Electron app does
//   noctx     refuse Target.createBrowserContext (an Electron app, a browser
//             that keeps its pages in its default context)
//   garbage   answer Browser.getVersion normally, then send non-JSON text
//   die       drop the connection (no close frame) on the first Runtime.evaluate
//   relay     relay everything unchanged
//   latetarget  hold the browser's Target.detachedFromTarget and
//             Target.targetDestroyed events back 500 ms (a loaded machine,
//             where they come reads after the page session's
//             Inspector.detached)
const http = require('http');
const WebSocket = require('ws');

const [upstreamUrl, mode = 'relay'] = process.argv.slice(2);
const server = http.createServer((req, res) => {
  if (req.url === '/json/version') {
    const port = server.address().port;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({
      Browser: 'ProxyTest/1.0',
      webSocketDebuggerUrl: `ws://127.0.0.1:${port}/devtools/browser/proxy`,
    }));
    return;
  }
  res.statusCode = 404;
  res.end('not found');
});
const wss = new WebSocket.Server({ server, path: '/devtools/browser/proxy',
                                   maxPayload: 256 * 1024 * 1024 });
wss.on('connection', (client) => {
  const up = new WebSocket(upstreamUrl, { maxPayload: 256 * 1024 * 1024 });
  const queue = [];
  up.on('open', () => { for (const m of queue) up.send(m); queue.length = 0; });
  up.on('message', (data) => {
    const text = data.toString();
    const send = () => { if (client.readyState === WebSocket.OPEN) client.send(text); };
    if (mode === 'latetarget' && /Target\.(detachedFromTarget|targetDestroyed)/.test(text)) {
      let m;
      try { m = JSON.parse(text).method; } catch (e) { m = ''; }
      if (m === 'Target.detachedFromTarget' || m === 'Target.targetDestroyed') {
        setTimeout(send, 500);
        return;
      }
    }
    send();
  });
  up.on('close', () => client.close());
  client.on('close', () => up.close());
  client.on('message', (data) => {
    const text = data.toString();
    let msg;
    try { msg = JSON.parse(text); } catch (e) { return; }
    if (mode === 'electron' && msg.method === 'Target.createTarget') {
      client.send(JSON.stringify({ id: msg.id, error: { code: -32000,
        message: 'Not allowed' } }));
      return;
    }
    if (mode === 'noctx' && msg.method === 'Target.createBrowserContext') {
      client.send(JSON.stringify({ id: msg.id, error: { code: -32000,
        message: 'Not supported' } }));
      return;
    }
    if (mode === 'garbage' && msg.method !== 'Browser.getVersion') {
      client.send('this is not {json');
      return;
    }
    if (mode === 'die' && msg.method === 'Runtime.evaluate') {
      client._socket.destroy();
      return;
    }
    if (up.readyState === WebSocket.OPEN) up.send(text); else queue.push(text);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(server.address().port + '\n');
});
