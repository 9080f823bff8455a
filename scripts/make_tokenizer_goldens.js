#!/usr/bin/env node
// Records reference tokenizations for tests/tokenizers/ with Hugging Face tokenizers itself (the
// Rust library, through its Node binding on the npm registry). Usage:
//   npm install --prefix /tmp/tokref @anush008/tokenizers-linux-x64-gnu@0.6.0
//   NODE_PATH=/tmp/tokref/node_modules node scripts/make_tokenizer_goldens.js ../shared tests/fixtures/tokenizers
// Writes:
//   extra_cases.json    more texts (edge cases + seeded random strings) and raw id lists to decode,
//                       for ../shared/models/{llama3,qwen3}-tokenizer/tokenizer.json;
//   gpt2_pipelines.json GPT-2's vocab.json + merges.txt under several pipelines (normalizers,
//                       Split behaviours, added-token flags, templates); each variant is the
//                       tokenizer.json without its model vocab/merges, which the test fills in.
'use strict';
const fs = require('fs');
const path = require('path');
const { Tokenizer } = require('@anush008/tokenizers-linux-x64-gnu');

const shared = process.argv[2] || '../shared';
const outDir = process.argv[3] || 'tests/fixtures/tokenizers';

// A small deterministic generator (mulberry32), so the random texts are the same on every run.
function rng(seed) {
  return () => {
    seed |= 0; seed = (seed + 0x6D2B79F5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Pieces random texts are drawn from: every character class the pre-tokenizer patterns treat
// differently, specials, and decomposed / compatibility forms that NFC/NFKC change.
const ATOMS = [
  'a', 'Z', 'hello', ' world', 'The', "'s", "'T", "'ll", "'RE", "'d", ' ', '  ', '   ', '\t', '\n', '\r\n', '\n\n',
  '\r', '0', '42', '1234567', '٣٤', '²', 'Ⅻ', '.', ',', '!?', '...', '-', '_', '__init__', '$', '€', '(', ')', '{',
  '}', '"', '«', '»', 'é', 'e\u0301', 'A\u030a', 'ﬁ', 'Ｆｕｌｌ', '①', 'ß', 'İ', 'Ω', 'Ω', '日本', '語', '한국어',
  'ไทย', 'عربى', 'עברית', '😀', '👍🏽', '👨‍👩‍👧', '\u200b', '\u200d', '\ufeff', '\u00a0', '\u2009', '\u3000',
  '\u2028', '\u0085', '<|endoftext|>', '<|begin_of_text|>', '<|eot_id|>', '<|im_start|>', '<|im_end|>', '<think>',
  '</think>', '<|eot_id', '<|', '|>', '<', '>', 'x'.repeat(300), ' '.repeat(40), '\n'.repeat(7), '9'.repeat(20),
];

function randomTexts(seed, count) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < count; i++) {
    const n = 1 + Math.floor(r() * 12);
    let s = '';
    for (let j = 0; j < n; j++) s += ATOMS[Math.floor(r() * ATOMS.length)];
    out.push(s);
  }
  return out;
}

const EDGE_TEXTS = [
  '<|eot_id|><|eot_id|>', '<|begin_of_text|><|begin_of_text|>x', '<|im_start|><|im_end|>', 'a<|endoftext|>b',
  '<think>\nreasoning\n</think>\n\nanswer', '<|eot_id', 'x<|eot_id|>y', ' <|eot_id|> ', "don't DON'T Don'T o'clock ''s",
  'ﬁne ﬂower Ｆｕｌｌｗｉｄｔｈ ①②③ ²³ ㎏', 'e\u0301e\u0301e\u0301 A\u030aA\u030a', 'İstanbul ß STRASSE',
  '٣٤٥ ١٢٣٤ ۱۲۳ ०१२ 𝟘𝟙𝟚', 'x'.repeat(1000), 'ab'.repeat(300), ' '.repeat(100) + 'a', '\n'.repeat(50),
  '\r\r\n\n\r', 'a\u2028b\u2029c\u0085d', 'tab\t\t\ttabs\t', '    indented code\n        more',
  '0.1+0.2=0.30000000000000004', '1,234,567.89', 'https://hf.co/meta-llama/Llama-3.1-8B?x=1&y=2',
  '🤗🤗🤗 🏳️‍🌈 🇫🇷', '\u{10FFFF}\u{E000}', '\u0000\u0001\u001f\u007f', '  leading and trailing  ',
];

// GPT-2's byte-level alphabet: the character that stands for each byte.
function byteLevelChar(b) {
  const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  if (printable) return String.fromCodePoint(b);
  let n = 0;
  for (let x = 0; x < b; x++) if (!((x >= 0x21 && x <= 0x7e) || (x >= 0xa1 && x <= 0xac) || (x >= 0xae && x <= 0xff))) n++;
  return String.fromCodePoint(256 + n);
}

// Raw id lists to decode: multi-byte characters as one token per byte, cut short, reordered and
// interleaved with a special token (lossy U+FFFD), plus whole encodings.
async function decodeCases(tok, specialId) {
  const out = [];
  for (const ch of ['é', '日', '😀', '👍🏽']) {
    const bytes = Array.from(Buffer.from(ch, 'utf8'));
    const ids = bytes.map((b) => tok.tokenToId(byteLevelChar(b)));
    if (ids.some((id) => id === undefined || id === null)) throw new Error('no byte token for ' + ch);
    out.push(ids);
    out.push(ids.slice(0, 1));
    out.push(ids.slice(0, ids.length - 1));
    out.push(ids.slice(1));
    out.push([...ids].reverse());
    out.push([ids[0], specialId, ...ids.slice(1)]);
    out.push([...ids, ...ids.slice(0, 1), ...ids]);
    const whole = await tok.encode(ch, null, { addSpecialTokens: false });
    out.push(whole.getIds());
  }
  out.push([specialId]);
  out.push([specialId, specialId]);
  out.push([]);
  return out;
}

async function caseFor(tok, id, text) {
  const plain = await tok.encode(text, null, { addSpecialTokens: false });
  const special = await tok.encode(text, null, { addSpecialTokens: true });
  const ids = plain.getIds();
  const ids2 = special.getIds();
  return {
    id, text, ids, ids_with_special_tokens: ids2,
    decoded: await tok.decode(ids, false),
    decoded_with_special: await tok.decode(ids2, false),
    decoded_skip_special: await tok.decode(ids2, true),
  };
}

async function extraCases() {
  const out = {};
  for (const [name, special] of [['llama3', 128009], ['qwen3', 151645]]) {
    const tok = Tokenizer.fromFile(path.join(shared, 'models', `${name}-tokenizer`, 'tokenizer.json'));
    const cases = [];
    for (let i = 0; i < EDGE_TEXTS.length; i++) cases.push(await caseFor(tok, `edge-${i}`, EDGE_TEXTS[i]));
    const random = randomTexts(name === 'llama3' ? 11 : 12, 150);
    for (let i = 0; i < random.length; i++) cases.push(await caseFor(tok, `random-${i}`, random[i]));
    const decodes = [];
    for (const ids of await decodeCases(tok, special))
      decodes.push({ ids, decoded: await tok.decode(ids, false), decoded_skip_special: await tok.decode(ids, true) });
    out[name] = { tokenizer: `${name}-tokenizer`, cases, decodes };
  }
  return out;
}

const BYTE_LEVEL_OFFSETS = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
const BYTE_LEVEL_PRE = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };
const BYTE_LEVEL_DECODER = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
const EOT = { id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };

function split(regex, behavior, invert) {
  return { type: 'Split', pattern: { Regex: regex }, behavior, invert };
}

// Each variant: the tokenizer.json fields around GPT-2's BPE model.
const VARIANTS = {
  // transformers' GPT2TokenizerFast built from vocab.json + merges.txt.
  gpt2: { added_tokens: [EOT], normalizer: null,
          pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
          post_processor: BYTE_LEVEL_OFFSETS, decoder: BYTE_LEVEL_DECODER, ignore_merges: false },
  prefix_space_ignore_merges: { added_tokens: [EOT], normalizer: { type: 'NFKC' },
          pre_tokenizer: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
          post_processor: null, decoder: BYTE_LEVEL_DECODER, ignore_merges: true },
  removed_nfd: { added_tokens: [], normalizer: { type: 'Sequence', normalizers: [{ type: 'NFD' }] },
          pre_tokenizer: { type: 'Sequence', pretokenizers: [split('\\s+', 'Removed', false), BYTE_LEVEL_PRE] },
          post_processor: null, decoder: BYTE_LEVEL_DECODER, ignore_merges: false },
  merged_previous: { added_tokens: [], normalizer: null,
          pre_tokenizer: { type: 'Sequence', pretokenizers: [split('[,.!?]', 'MergedWithPrevious', false), BYTE_LEVEL_PRE] },
          post_processor: null, decoder: BYTE_LEVEL_DECODER, ignore_merges: false },
  merged_next_nfkd: { added_tokens: [], normalizer: { type: 'NFKD' },
          pre_tokenizer: { type: 'Sequence', pretokenizers: [split(' ', 'MergedWithNext', false), BYTE_LEVEL_PRE] },
          post_processor: null, decoder: BYTE_LEVEL_DECODER, ignore_merges: false },
  contiguous_inverted: { added_tokens: [], normalizer: null,
          pre_tokenizer: { type: 'Sequence', pretokenizers: [split('\\p{L}+', 'Contiguous', true), BYTE_LEVEL_PRE] },
          post_processor: null, decoder: BYTE_LEVEL_DECODER, ignore_merges: false },
  string_split_template: { added_tokens: [EOT], normalizer: null,
          pre_tokenizer: { type: 'Sequence', pretokenizers: [
            { type: 'Split', pattern: { String: '--' }, behavior: 'Isolated', invert: false },
            { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true }] },
          post_processor: { type: 'TemplateProcessing',
            single: [{ SpecialToken: { id: '<|endoftext|>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
                     { SpecialToken: { id: '<|endoftext|>', type_id: 0 } }],
            pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
            special_tokens: { '<|endoftext|>': { id: '<|endoftext|>', ids: [50256], tokens: ['<|endoftext|>'] } } },
          decoder: BYTE_LEVEL_DECODER, ignore_merges: false },
  // Sentencepiece-style pipelines (Llama-2/Mistral tokenizer.json files); a ByteLevel step after
  // them gives GPT-2's byte vocabulary something to match.
  metaspace_first: { added_tokens: [EOT], normalizer: null,
          pre_tokenizer: { type: 'Sequence', pretokenizers: [
            { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true }, BYTE_LEVEL_PRE] },
          post_processor: null,
          decoder: { type: 'Sequence', decoders: [BYTE_LEVEL_DECODER, { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: true }] },
          ignore_merges: false },
  metaspace_always_unsplit: { added_tokens: [EOT], normalizer: null,
          pre_tokenizer: { type: 'Sequence', pretokenizers: [
            { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: false }, BYTE_LEVEL_PRE] },
          post_processor: null,
          decoder: { type: 'Sequence', decoders: [BYTE_LEVEL_DECODER, { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: false }] },
          ignore_merges: false },
  metaspace_never: { added_tokens: [EOT], normalizer: null,
          pre_tokenizer: { type: 'Sequence', pretokenizers: [
            { type: 'Metaspace', replacement: '▁', prepend_scheme: 'never', split: true }, BYTE_LEVEL_PRE] },
          post_processor: null,
          decoder: { type: 'Sequence', decoders: [BYTE_LEVEL_DECODER, { type: 'Metaspace', replacement: '▁', prepend_scheme: 'never', split: true }] },
          ignore_merges: false },
  prepend_replace_strip: { added_tokens: [EOT],
          normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
          pre_tokenizer: BYTE_LEVEL_PRE, post_processor: null,
          decoder: { type: 'Sequence', decoders: [BYTE_LEVEL_DECODER, { type: 'Replace', pattern: { String: '▁' }, content: ' ' },
                                                  { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
          ignore_merges: false },
  // Llama-2 style: no pre-tokenizer, unknown characters fall back to <0xXX> byte tokens (added to
  // GPT-2's vocabulary as ids 50257..50512, `extra_vocab`) or become one fused unknown token.
  byte_fallback: { added_tokens: [EOT], extra_vocab: true,
          normalizer: { type: 'Sequence', normalizers: [{ type: 'Prepend', prepend: '▁' }, { type: 'Replace', pattern: { String: ' ' }, content: '▁' }] },
          pre_tokenizer: null, post_processor: null, byte_fallback: true,
          decoder: { type: 'Sequence', decoders: [{ type: 'Replace', pattern: { String: '▁' }, content: ' ' }, { type: 'ByteFallback' },
                                                  { type: 'Fuse' }, { type: 'Strip', content: ' ', start: 1, stop: 0 }] },
          ignore_merges: false },
  unknown_fused: { added_tokens: [EOT], normalizer: null, pre_tokenizer: null, post_processor: null,
          unk_token: '<|endoftext|>', fuse_unk: true, decoder: null, ignore_merges: false },
  unknown_unfused: { added_tokens: [EOT], normalizer: null, pre_tokenizer: null, post_processor: null,
          unk_token: '<|endoftext|>', fuse_unk: false, decoder: null, ignore_merges: false },
  added_token_flags: { normalizer: { type: 'NFKC' },
          added_tokens: [
            EOT,
            { id: 50257, content: '<mask>', single_word: false, lstrip: true, rstrip: false, normalized: false, special: true },
            { id: 50258, content: '[SEP]', single_word: false, lstrip: false, rstrip: true, normalized: false, special: true },
            { id: 50259, content: 'cat', single_word: true, lstrip: false, rstrip: false, normalized: false, special: false },
            { id: 50260, content: 'Ｄｏｇ', single_word: false, lstrip: false, rstrip: false, normalized: true, special: false },
            { id: 50261, content: 'ok ok', single_word: false, lstrip: true, rstrip: true, normalized: true, special: false },
            { id: 50262, content: '<mask><mask>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
            // decoded as itself (it has a space, outside the byte-level alphabet), not byte by byte
            { id: 50263, content: 'café Ġx', single_word: false, lstrip: false, rstrip: false, normalized: false, special: false },
            { id: 50264, content: 'ĠéĠ', single_word: false, lstrip: false, rstrip: false, normalized: false, special: false }],
          pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
          post_processor: BYTE_LEVEL_OFFSETS, decoder: BYTE_LEVEL_DECODER, ignore_merges: false },
};

const GPT2_TEXTS = [
  '', 'Hello world', "Hello, world! It's 2026... isn't it?", '  two  spaces  ', 'line\nbreak\r\n', 'naïve café ﬁne',
  'e\u0301 vs é', 'Ｆｕｌｌ ① ²', ' lead', '▁already▁marked ▁x', '<|endoftext|> after', 'a <|endoftext|> b', 'a<|endoftext|>b', '<|endoftext|><|endoftext|>', 'mask <mask> and  <mask>x',
  'x [SEP]   y [SEP]', 'cat concat cat_ cats the cat.', 'Dog Ｄｏｇ DOG dog', 'ok ok  ok  ok ok', '<mask><mask><mask>',
  'one--two---three', 'a café Ġx b', 'xĠéĠy', 'é café Ġx', 'so, what. now!? yes', '日本語 😀 👍🏽', 'def f(x):\n    return x  # c\n', '\t\ttabs',
];

async function gpt2Pipelines() {
  const vocab = JSON.parse(fs.readFileSync(path.join(shared, 'models', 'gpt2-tokenizer', 'vocab.json'), 'utf8'));
  const merges = fs.readFileSync(path.join(shared, 'models', 'gpt2-tokenizer', 'merges.txt'), 'utf8')
    .split('\n').filter((l) => l.length && !l.startsWith('#version')).map((l) => l.split(' '));
  const out = { model: 'gpt2-tokenizer', variants: [] };
  const texts = GPT2_TEXTS.concat(randomTexts(13, 25));
  for (const [name, v] of Object.entries(VARIANTS)) {
    const extra = {};
    if (v.extra_vocab)
      for (let b = 0; b < 256; b++) extra['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>'] = 50257 + b;
    const json = {
      version: '1.0', truncation: null, padding: null, added_tokens: v.added_tokens, normalizer: v.normalizer,
      pre_tokenizer: v.pre_tokenizer, post_processor: v.post_processor, decoder: v.decoder,
      model: { type: 'BPE', dropout: null, unk_token: v.unk_token || null, continuing_subword_prefix: null,
               end_of_word_suffix: null, fuse_unk: !!v.fuse_unk, byte_fallback: !!v.byte_fallback,
               ignore_merges: v.ignore_merges, vocab: Object.assign({}, vocab, extra), merges },
    };
    const tok = Tokenizer.fromString(JSON.stringify(json));
    const cases = [];
    for (let i = 0; i < texts.length; i++) cases.push(await caseFor(tok, `${name}-${i}`, texts[i]));
    const pipeline = Object.assign({}, json);
    pipeline.model = Object.assign({}, json.model);
    delete pipeline.model.vocab;
    delete pipeline.model.merges;
    out.variants.push({ name, tokenizer_json_without_vocab_and_merges: pipeline, extra_vocab: extra, cases });
  }
  return out;
}

(async () => {
  fs.mkdirSync(outDir, { recursive: true });
  const reference = 'huggingface/tokenizers 0.22.2 (Rust) via @anush008/tokenizers-linux-x64-gnu 0.6.0';
  const extra = await extraCases();
  extra.reference = reference;
  fs.writeFileSync(path.join(outDir, 'extra_cases.json'), JSON.stringify(extra, null, 0) + '\n');
  const gpt2 = await gpt2Pipelines();
  gpt2.reference = reference;
  fs.writeFileSync(path.join(outDir, 'gpt2_pipelines.json'), JSON.stringify(gpt2, null, 0) + '\n');
})().catch((e) => { console.error(e); process.exit(1); });
