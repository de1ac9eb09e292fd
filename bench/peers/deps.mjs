// Re-exports of the benchmark peers, so scripts in bench/ resolve them from
// bench/peers/node_modules (bare specifiers resolve from this file's folder).
// Without bench/peers installed (bench/smoke.sh in CI runs only cdpgate's
// side): the MCP client comes from the test peers (tests/peers, installed by
// tests/setup.sh), Playwright is null (pw_bench.mjs is not run), and tokens
// are estimated at 4 characters each (tokensEstimated says so).
const TEST_SDK = '../../tests/peers/node_modules/@modelcontextprotocol/sdk/dist/esm/client/';

async function load(spec, fallback) {
    try {
        return await import(spec);
    } catch (e) {
        if (!fallback)
            return null;
        return import(new URL(fallback, import.meta.url).href);
    }
}

const sdk = await load('@modelcontextprotocol/sdk/client/index.js', TEST_SDK + 'index.js');
const stdio = await load('@modelcontextprotocol/sdk/client/stdio.js', TEST_SDK + 'stdio.js');
const pw = await load('playwright-core');
const tok = await load('gpt-tokenizer/encoding/o200k_base');

export const Client = sdk.Client;
export const StdioClientTransport = stdio.StdioClientTransport;
export const chromium = pw ? pw.chromium : null;
export const tokensEstimated = !tok;
export const countTokens = tok ? tok.countTokens : (s) => Math.ceil(String(s).length / 4);
