// mcp_client.mjs — the official MCP TypeScript SDK client as an independent
// peer for `cdpgate mcp` (tests/test_mcp.c runs it).
//
//   node tests/peers/mcp_client.mjs CDPGATE_BIN HOST_RULES [URL]
//
// Spawns `CDPGATE_BIN --browser-arg HOST_RULES mcp` through the SDK's
// StdioClientTransport, connects (initialize + initialized), lists tools,
// checks that an unknown tool and bad arguments are rejected the way the
// SDK expects, and, when URL is given, calls browser_open (with a progress
// callback), browser_snapshot and browser_click on the fixture page. Prints
// one JSON summary line on stdout; exits 1 if something threw.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [bin, hostRules, url] = process.argv.slice(2);
const summary = {};

const transport = new StdioClientTransport({
  command: bin,
  args: ['--browser-arg', hostRules, 'mcp'],
  stderr: 'inherit',
});
const client = new Client({ name: 'cdpgate-test-peer', version: '1.0.0' });

// The SDK has no getter for the negotiated version: watch the initialize
// result go by on its way to the client.
let negotiated = null;
let onmessage;
Object.defineProperty(transport, 'onmessage', {
  get: () => onmessage,
  set: (fn) => {
    onmessage = fn && ((m) => {
      if (m && m.result && typeof m.result.protocolVersion === 'string') {
        negotiated = m.result.protocolVersion;
      }
      fn(m);
    });
  },
});

function textOf(result) {
  return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

try {
  await client.connect(transport);
  summary.protocolVersion = negotiated;
  summary.serverName = client.getServerVersion()?.name;

  const { tools } = await client.listTools();
  summary.tools = tools.length;
  summary.toolNames = tools.map((t) => t.name);
  summary.toolsListChars = JSON.stringify(tools).length;
  await client.ping();

  try {
    await client.callTool({ name: 'browser_nope', arguments: {} });
    summary.unknownToolRejected = false;
  } catch (e) {
    summary.unknownToolRejected = e.code === -32602;
  }
  const bad = await client.callTool({ name: 'browser_click', arguments: { ref: 5 } });
  summary.badArgsIsError = bad.isError === true && /ref/.test(textOf(bad));

  if (url) {
    let progress = 0;
    const open = await client.callTool(
      { name: 'browser_open', arguments: { url } },
      undefined,
      { onprogress: () => { progress++; }, timeout: 60000 },
    );
    summary.progress = progress;
    summary.openOk = !open.isError && textOf(open).includes('MCP fixture');
    summary.openStructured = typeof open.structuredContent === 'object' &&
      open.structuredContent !== null;

    const snap = await client.callTool({ name: 'browser_snapshot', arguments: {} });
    const text = textOf(snap);
    const greet = /button "Greet" \[(e\d+)\]/.exec(text);
    summary.snapshotHasRefs = !snap.isError && greet !== null;

    if (greet) {
      const click = await client.callTool({ name: 'browser_click', arguments: { ref: greet[1] } });
      summary.clickOk = !click.isError;
      const after = await client.callTool({ name: 'browser_snapshot', arguments: { text: true } });
      summary.clickChangedPage = textOf(after).includes('Hello, !');
    }
  }
  await client.close();
  process.stdout.write(JSON.stringify(summary) + '\n');
} catch (e) {
  summary.error = String(e && e.stack || e);
  process.stdout.write(JSON.stringify(summary) + '\n');
  try { await client.close(); } catch { /* already gone */ }
  process.exit(1);
}
