'use strict';
// ws_server.js — an independent WebSocket/HTTP peer for tests/test_ws.c,
// built on the npm `ws` package. Listens on 127.0.0.1, port 0, plain and
// TLS (tls/cert.pem, a self-signed test certificate for 127.0.0.1), and
// prints "PORT TLSPORT" on stdout. Exits when stdin closes (the test also
// kills it by pid).
//
// Behaviour by path:
//   /echo         echo every message (same type)
//   /fragmented   send "Hello, fragmented world" as 3 fragments, then echo
//   /big          send a 16 MiB + 3 text message (pattern), then echo
//   /pings        ping, "one", ping inside a fragmented "two", "three",
//                 then "pongs=N" (pongs received so far)
//   /close        close with 4001 "bye now"
//   /midframe     raw: start a 256-byte text frame, send 50 bytes, destroy
//   /badutf8      raw: text frame C3 28 (invalid UTF-8)
//   /masked       raw: masked "Hello" frame from the server (RFC 6455 5.7)
//   /rsv          raw: text frame with RSV1 set
//   /reject       HTTP 403 instead of the upgrade
//   /badaccept    101 with a wrong Sec-WebSocket-Accept
// HTTP (no upgrade):
//   /json/version JSON with Content-Length
//   /chunked      JSON sent with Transfer-Encoding: chunked
//   /stats        {"lastClose": code} — the last close code a client sent
//   /slow         never answers
//   anything else 404
const fs = require('fs');
const http = require('http');
const https = require('https');
const path = require('path');
const { WebSocketServer } = require('ws');

let lastClose = null;
let port = 0;
function handler(req, res) {
  if (req.url === '/json/version') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ Browser: 'ws-peer/1.0',
      webSocketDebuggerUrl: `ws://127.0.0.1:${port}/echo` }));
  } else if (req.url === '/chunked') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"chunked":');
    setTimeout(() => { res.write('true'); res.end('}'); }, 20);
  } else if (req.url === '/stats') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ lastClose }));
  } else if (req.url === '/slow') {
    // never answer
  } else {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    res.end('not found');
  }
}
const server = http.createServer(handler);
const tlsServer = https.createServer({
  key: fs.readFileSync(path.join(__dirname, 'tls', 'key.pem')),
  cert: fs.readFileSync(path.join(__dirname, 'tls', 'cert.pem')),
}, handler);

const wss = new WebSocketServer({ noServer: true, maxPayload: 64 << 20,
  perMessageDeflate: false });

function raw(ws, bytes, destroy) {
  ws._socket.write(Buffer.from(bytes), () => { if (destroy) ws._socket.destroy(); });
}

function echo(ws) {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
}

function behave(path, ws) {
  ws.on('close', (code) => { lastClose = code; });
  ws.on('error', () => {});
  switch (path) {
    case '/echo':
      echo(ws);
      break;
    case '/fragmented':
      ws.send('Hello, ', { fin: false });
      ws.send('fragmented', { fin: false });
      ws.send(' world', { fin: true });
      echo(ws);
      break;
    case '/big': {
      const n = (16 << 20) + 3;
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = 97 + (i % 26);
      ws.send(b, { binary: false });
      echo(ws);
      break;
    }
    case '/pings': {
      let pongs = 0;
      ws.on('pong', () => { pongs++; });
      ws.ping('p1');
      ws.send('one');
      ws.send('t', { fin: false });
      ws.ping('p2');
      ws.send('w', { fin: false });
      ws.ping('p3');
      ws.send('o', { fin: true });
      ws.send('three');
      ws.on('message', (d) => {
        if (d.toString() === 'count') ws.send(`pongs=${pongs}`);
      });
      break;
    }
    case '/close':
      ws.close(4001, 'bye now');
      break;
    case '/midframe': {
      const f = [0x81, 0x7e, 0x01, 0x00];
      for (let i = 0; i < 50; i++) f.push(0x61);
      raw(ws, f, true);
      break;
    }
    case '/badutf8':
      raw(ws, [0x81, 0x02, 0xc3, 0x28]);
      break;
    case '/masked':
      raw(ws, [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]);
      break;
    case '/rsv':
      raw(ws, [0xc1, 0x02, 0x68, 0x69]);
      break;
    default:
      ws.close(1008, 'unknown path');
  }
}

function onUpgrade(req, socket, head) {
  if (req.url === '/reject') {
    socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  if (req.url === '/badaccept') {
    socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n' +
      'Connection: Upgrade\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n');
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => behave(req.url, ws));
}
server.on('upgrade', onUpgrade);
tlsServer.on('upgrade', onUpgrade);

server.listen(0, '127.0.0.1', () => {
  port = server.address().port;
  tlsServer.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${port} ${tlsServer.address().port}\n`);
  });
});
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
