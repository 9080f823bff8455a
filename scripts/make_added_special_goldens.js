#!/usr/bin/env node
// Records how Hugging Face tokenizers (the Rust library, through its Node binding) encodes text
// after a special token was added to it, as kvpress's FinchPress.update_model_and_tokenizer adds
// "<|finch_sep|>" (transformers' add_special_tokens): for tests/tokenizers/ to compare
// models::Tokenizer::encode(text, false, {token}) with. Usage:
//   npm install --prefix /tmp/tokref @anush008/tokenizers-linux-x64-gnu@0.6.0
//   NODE_PATH=/tmp/tokref/node_modules node scripts/make_added_special_goldens.js ../shared tests/fixtures/tokenizers
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('@anush008/tokenizers-linux-x64-gnu');

const shared = process.argv[2] || '../shared';
const outDir = process.argv[3] || 'tests/fixtures/tokenizers';
const TOKEN = '<|finch_sep|>';
// Contexts and questions as a query-aware kvpress prompt joins them: the segment after the token
// starts with and without a space, after a newline, and the token at either end.
const TEXTS = [
  'The cat sat on the mat.' + TOKEN + 'Where did the cat sit?',
  'Once upon a time there was a fox.\n' + TOKEN + ' What was there?',
  'numbers 12345 and   spaces' + TOKEN + '\nAnswer: ',
  TOKEN + 'only a question',
  'only a context' + TOKEN,
  'héllo wörld 日本語' + TOKEN + ' 😀 emoji',
];

(async () => {
  const out = { token: TOKEN, library: '@anush008/tokenizers-linux-x64-gnu@0.6.0', tokenizers: {} };
  for (const name of ['llama3-tokenizer', 'qwen3-tokenizer']) {
    const tok = Tokenizer.fromFile(path.join(shared, 'models', name, 'tokenizer.json'));
    tok.addSpecialTokens([TOKEN]);
    const cases = [];
    for (const text of TEXTS) {
      const enc = await tok.encode(text, null, { addSpecialTokens: false });
      cases.push({ text, ids: Array.from(enc.getIds()) });
    }
    out.tokenizers[name] = { token_id: tok.tokenToId(TOKEN), cases };
  }
  const file = path.join(outDir, 'added_special_token.json');
  fs.writeFileSync(file, JSON.stringify(out, null, 1) + '\n');
  console.log(`${file}: ${TEXTS.length} texts x ${Object.keys(out.tokenizers).length} tokenizers`);
})();
