#!/usr/bin/python3
"""Records what the native RULER pieces are tested against, from the reference implementations:
NLTK's sent_tokenize (Punkt, english) and word tokenizer, CPython's random and NumPy's legacy
np.random. Run with Debian's python3 (python3-nltk, python3-numpy) and the Punkt English model
under /tmp/nltk_data (tokenizers/punkt/PY3/english.pickle; see data/ruler/PROVENANCE.md):

  /usr/bin/python3 scripts/ruler_reference/record_unit_goldens.py data/ruler tests/fixtures/ruler
"""
import json
import random
import re
import sys

import nltk
import numpy as np

nltk.data.path.insert(0, "/tmp/nltk_data")
from nltk.tokenize import sent_tokenize
from nltk.tokenize.punkt import PunktLanguageVars

data_dir, out_dir = sys.argv[1], sys.argv[2]

CASES = [
    "Mr. Smith went to Washington. He saw it.",
    "Very bad acting!!! I promise.",
    "(Sent1.) Sent2.",
    '"Stop." She said. "Why?" He asked! Then... nothing.',
    "J. K. Rowling wrote it. The U.S. is large. Dr. No arrived at 5 p.m. Then he left.",
    "It cost $3.50. That's 3.5 more. 1. First item. 2. Second item.",
    "Wait . . . what? Yes -- no. Ok.. fine....Really?!",
    "Hello world.\n\nNew paragraph here. Another one.\nLine two.",
    "  Leading and trailing spaces.   More text here.   ",
    "E.g. this is tricky. I.e. so is this. Etc. etc.",
    "He said \u201cgo.\u201d Then left. \u00c9cole est belle. \u0130stanbul. \u00e7ok g\u00fczel.",
    "The end.) (Next one.] Another} sentence.' Quote\" done.",
    "No break here",
    "Ends with question? and lowercase continues. Capital Then.",
    "Numbers 1,000.5 and -2.5. Then 3.-4. Go.",
    "A. B. C. D. E. sentence starts. Z.",
    "Jan. 5 was cold. Feb. was warmer. Sept. 11th.",
    "Words--with--dashes. And more---here.",
    "Tab\tseparated. Words\there.",
    "x.y.z. is a domain. www.example.com. Visit now.",
]

words_cases = [
    "Hello, world! This is (a) test... with 'quotes' and \"double\" -- dashes.",
    "1,000 items; 2.5% rate: yes@no #tag *star* {brace} [bracket] `tick`",
    ". . . ellipsis .. two ... three . . . . four",
    "a,b ,c, d,, e,",
]

lv = PunktLanguageVars()
out = {
    "sentences": [{"text": t, "sentences": sent_tokenize(t)} for t in CASES],
    "words": [{"text": t, "words": lv.word_tokenize(t)} for t in words_cases],
}

# The RULER haystack at a few sizes, as niah.py builds it.
essay = json.load(open(f"{data_dir}/PaulGrahamEssays.json"))["text"]
haystack = re.sub(r"\s+", " ", essay).split(" ")
out["essay"] = []
for n in (500, 3000, 20000):
    text = " ".join(haystack[:n]).strip()
    sents = sent_tokenize(text)
    out["essay"].append({"num_haystack": n, "count": len(sents), "sentences": sents})
json.dump(out, open(f"{out_dir}/punkt_cases.json", "w"), ensure_ascii=False, indent=0)

r = random.Random(42)
rnd = {"seed": 42, "random": [r.random() for _ in range(5)]}
rnd["getrandbits128"] = str(r.getrandbits(128))
rnd["randint"] = [r.randint(1000000, 9999999) for _ in range(5)]
rnd["sample_range_100000_5"] = r.sample(range(100000), 5)
rnd["sample_range_40_4"] = r.sample(range(40), 4)
rnd["sample_range_10_10"] = r.sample(range(10), 10)
rnd["sample_range_30_25"] = r.sample(range(30), 25)
rnd["choices_26_6"] = r.choices(range(26), k=6)
rnd["choice_7"] = [r.choice(range(7)) for _ in range(5)]
np.random.seed(42)
rnd["numpy_seed42_randint_10000_99999"] = [int(np.random.randint(10000, 99999)) for _ in range(6)]
np.random.seed(7)
rnd["numpy_seed7_randint_0_3"] = [int(np.random.randint(0, 3)) for _ in range(6)]
rnd["depths"] = [int(x) for x in np.round(np.linspace(0, 100, num=40, endpoint=True)).astype(int)]
json.dump(rnd, open(f"{out_dir}/python_random.json", "w"), indent=0)
print("written")
