// Re-exports of the benchmark peers, so scripts in bench/ resolve them from
// bench/peers/node_modules (bare specifiers resolve from this file's folder).
export { Client } from '@modelcontextprotocol/sdk/client/index.js';
export { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
export { chromium } from 'playwright-core';
export { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
