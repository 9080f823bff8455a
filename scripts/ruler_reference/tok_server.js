#!/usr/bin/env node
// Persistent token-count server for the RULER reference recording (scripts/ruler_reference/).
// Loads a tokenizer.json with Hugging Face tokenizers (the Rust library, through its Node binding
// @anush008/tokenizers-linux-x64-gnu@0.6.0) and answers one JSON line per request on stdin:
//   request  {"text": "..."}            -> reply {"tokens": ["...", ...]}
// The tokens are encode(text, addSpecialTokens=false).getTokens(), i.e. what transformers'
// PreTrainedTokenizerFast.tokenize(text) returns. Usage: node tok_server.js path/to/tokenizer.json
'use strict';
const readline = require('readline');
const { Tokenizer } = require('@anush008/tokenizers-linux-x64-gnu');
const tok = Tokenizer.fromFile(process.argv[2]);
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
// Answer strictly in request order.
let chain = Promise.resolve();
rl.on('line', (line) => {
  chain = chain.then(async () => {
    const req = JSON.parse(line);
    const enc = await tok.encode(req.text, null, { addSpecialTokens: false });
    process.stdout.write(JSON.stringify({ tokens: enc.getTokens() }) + '\n');
  });
});
rl.on('close', () => { chain.then(() => process.exit(0)); });
