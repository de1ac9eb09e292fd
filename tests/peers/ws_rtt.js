'use strict';
// ws_rtt.js URL [N] — round-trip time of Node's `ws` client against an echo
// server, to compare with test_ws's "websocket echo round trip" figure.
const WebSocket = require('ws');
const url = process.argv[2];
const n = Number(process.argv[3] || 2000);
const msg = '{"id":1,"method":"Runtime.evaluate","params":{"expression":"1"}}';
const ws = new WebSocket(url, { perMessageDeflate: false });
ws.on('open', () => {
  let i = 0;
  const t0 = process.hrtime.bigint();
  ws.on('message', () => {
    if (++i === n) {
      const us = Number(process.hrtime.bigint() - t0) / 1e3 / n;
      console.log(`node ws echo round trip: ${us.toFixed(1)} us`);
      ws.close();
    } else {
      ws.send(msg);
    }
  });
  ws.send(msg);
});
