#!/usr/bin/env python3
"""kvbench against Hugging Face transformers on one GPU, same machine, same shapes (issue #15):
a Llama-3-8B-shaped checkpoint with random bf16 weights (written by transformers itself as
safetensors), prompts of 4K, 16K and 32K tokens, 64 decoded tokens, for full, snapkv,
streaming_llm and h2o. Prints one Markdown table (prefill and decode tokens/s, peak GPU memory)
and writes the raw numbers as JSON.

Run on the GPU machine after `scripts/cuda_build.sh build-cuda`:
    python3 scripts/gpu_compare_hf.py --kvbench build-cuda/kvbench --workdir /tmp/l3 \
        --tokenizer ../shared/models/llama2-tokenizer/tokenizer.model --out results/perf/gpu_vs_hf.json

transformers runs with attn_implementation="sdpa". Compression on the transformers side uses
NVIDIA kvpress presses where kvpress is importable (SnapKVPress, StreamingLLMPress,
ObservedAttentionPress for H2O, which needs eager attention); without kvpress only Full is run
there and the table says so. Peak memory, like for like: torch.cuda.max_memory_allocated for transformers
and the same counter of libtorch's allocator for kvbench, per row (`bench` reports
device_peak_allocated_bytes); the kvbench process's `nvidia-smi` peak (CUDA context and cached
blocks included) is kept in the JSON too. kvbench runs as two processes (Full, then the
compressing policies), each loading the checkpoint once and printing a row as it finishes.
By default Full also runs with its decoding steps as CUDA graphs (`+graphs`: bench's
`cuda_graphs`, the dense work between the attentions replayed, one launch per layer), with
kvbench's split-K decoding kernel, and with the chunked matmul-softmax attention, beside the fused
kernel (`--attention auto,auto+graphs,split_k+graphs,split_k,chunked`), to show which decodes
fastest; `--policy-attention auto,split_k` runs the other policies both ways too (a step with
statistics: auto's chunked pass, or split-K's output beside the statistics-only pass). Each
row's bandwidth bound is (weight bytes + the row's KV bytes) ÷ --bandwidth. Token ids are
synthetic (speed does not depend on them); the vocabulary of --tokenizer is irrelevant to the
timing.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

try:
    import torch
except ImportError:  # --print-cells (the CPU dry run) needs no torch
    torch = None

CONTEXTS = [4096, 16384, 32768]
# In the order a lease measures them (rows are written as they finish, up to the deadline): the
# three with a transformers/kvpress counterpart below first, then every other baseline, the seed
# papers' policies and kvpress's presses (kvbench alone).
POLICIES = ["full", "snapkv", "streaming_llm", "h2o", "pyramidkv", "adakv", "tova", "kvec", "buzz", "roco", "bumblebee",
            "cascade", "kvpress:snapkv", "kvpress:knorm", "kvpress:expected_attention", "kvpress:adakv_snapkv",
            "kvpress:tova", "kvpress:streaming_llm", "kvpress:kvzip", "kvpress:kvcompose"]
HF_PRESSES = {"snapkv", "streaming_llm", "h2o"}  # policies hf_run has a kvpress press for
BUDGET = 1024  # tokens per KV head for the compressing policies
KV_BYTES_PER_TOKEN = 2 * 32 * 8 * 128 * 2  # keys and values, 32 layers, 8 KV heads, head_dim 128, bf16
DECODE = 64


def write_checkpoint(path):
    """Llama-3-8B shapes, random bf16 weights, written by transformers (model.safetensors shards)."""
    if os.path.exists(os.path.join(path, "config.json")):
        return
    from transformers import LlamaConfig, LlamaForCausalLM
    shapes = dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                  num_key_value_heads=8, vocab_size=128256, max_position_embeddings=131072, rms_norm_eps=1e-5,
                  tie_word_embeddings=False)
    rope = {"rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}
    try:  # transformers >= 5: rope_parameters holds theta and scaling together
        config = LlamaConfig(**shapes, rope_parameters=rope)
    except TypeError:
        config = LlamaConfig(**shapes, rope_theta=rope.pop("rope_theta"), rope_scaling=rope)
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)  # initialise in bf16 directly: 16 GB, not 32
    with torch.device("cuda"):
        model = LlamaForCausalLM(config)
    torch.set_default_dtype(torch.float32)
    model.save_pretrained(path, safe_serialization=True, max_shard_size="5GB")
    del model
    torch.cuda.empty_cache()


def synthetic_ids(n, vocab=128256):
    return torch.tensor([[1] + [3 + (i * 7919) % (vocab - 3) for i in range(1, n)]], device="cuda")


def hf_load(path, attn):
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(path, dtype=torch.bfloat16, attn_implementation=attn).cuda().eval()


def hf_run(model, context, policy, presses):
    """One prefill of `context` synthetic tokens and DECODE greedy steps, as generate() does them:
    the prefill computes the last position's logits only (logits_to_keep=1)."""
    ids = synthetic_ids(context)
    press = None
    if policy != "full":
        ratio = 1.0 - BUDGET / context
        press = {"snapkv": lambda: presses.SnapKVPress(compression_ratio=ratio, window_size=32, kernel_size=7),
                 "streaming_llm": lambda: presses.StreamingLLMPress(compression_ratio=ratio, n_sink=4),
                 "h2o": lambda: presses.ObservedAttentionPress(compression_ratio=ratio)}[policy]()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.synchronize()
    with torch.no_grad(), (press(model) if press else _null()):
        t0 = time.perf_counter()
        out = model(ids, use_cache=True, logits_to_keep=1)
        nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        torch.cuda.synchronize()
        t1 = time.perf_counter()
    past = out.past_key_values
    with torch.no_grad():
        t2 = time.perf_counter()
        for _ in range(DECODE):
            out = model(nxt, past_key_values=past, use_cache=True)
            past = out.past_key_values
            nxt = out.logits[:, -1].argmax(-1, keepdim=True)
        torch.cuda.synchronize()
        t3 = time.perf_counter()
    peak = torch.cuda.max_memory_allocated()
    del out, past
    return {"prefill_tokens_per_s": context / (t1 - t0), "decode_tokens_per_s": DECODE / (t3 - t2), "peak_bytes": peak}


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def gpu_memory_of(pid):
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        p, mem = [x.strip() for x in line.split(",")]
        if int(p) == pid:
            return int(mem) * 1024 * 1024
    return 0


KERNELS = ("auto", "chunked", "split_k")


def variant_name(attention, graphs):
    """A kvbench variant as --attention lists it: the attention kernel, "+graphs" for CUDA graphs."""
    return attention + ("+graphs" if graphs else "")


def kvbench_cell(policy, variant):
    budget = "full" if policy == "full" else BUDGET
    # One-shot policies compress the prompt (kvpress's presses among them); the others evict while decoding.
    protocol = "oneshot" if policy in ("snapkv", "pyramidkv", "adakv") or policy.startswith("kvpress:") else "decode"
    attention, _, graphs = variant.partition("+")
    cell = {"policy": policy, "budget": budget, "protocol": protocol, "attention": attention}
    if graphs:
        cell["cuda_graphs"] = True
    return json.dumps(cell)


def kvbench_run(args, contexts, cells, on_row, deadline):
    """One kvbench process (one model load) for every (policy, attention) cell at every context:
    `bench` prints a JSON object per row as it finishes, handed to on_row(bench_row, result). The
    process is stopped at the deadline; rows already printed are kept. Peak memory per row is
    the allocator's (device_peak_allocated_bytes, as transformers' max_memory_allocated); the
    process's nvidia-smi peak (CUDA context and cached blocks included) is kept beside it."""
    cmd = [args.kvbench, "bench", "--model", args.workdir, "--tokenizer", args.tokenizer, "--device", "cuda",
           "--dtype", "bfloat16", "--context", ",".join(map(str, contexts)), "--decode", str(DECODE),
           "--warmup", "1", "--runs", "1", "--json"]
    for policy, attention in cells:
        cmd += ["--cell", kvbench_cell(policy, attention)]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]

    def poll():
        while proc.poll() is None:
            peak[0] = max(peak[0], gpu_memory_of(proc.pid))
            if time.time() > deadline:
                proc.kill()
            time.sleep(0.05)

    watcher = threading.Thread(target=poll)
    watcher.start()
    for line in proc.stdout:
        try:
            j = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by the deadline's kill
            continue
        result = {"error": j["error"]} if "error" in j else {
            "prefill_tokens_per_s": j["prefill_tokens_per_s"], "decode_tokens_per_s": j["decode_tokens_per_s"],
            "peak_bytes": j["device_peak_allocated_bytes"], "reserved_peak_bytes": j["device_peak_reserved_bytes"]}
        result.update({"process_peak_bytes_so_far": peak[0], "process_s_so_far": time.perf_counter() - started,
                       "command": " ".join(cmd), "bench": j})
        on_row(j, result)
    err = proc.stderr.read()
    proc.wait()
    watcher.join()
    if proc.returncode != 0:
        print(f"kvbench exited with {proc.returncode}: {err.strip()[-500:]}", file=sys.stderr, flush=True)
    return {"returncode": proc.returncode, "stderr_tail": err.strip()[-500:], "process_peak_bytes": peak[0],
            "process_s": time.perf_counter() - started, "command": " ".join(cmd)}


def print_table(meta, rows):
    print(f"{meta['gpu']}, torch {meta['torch']}, transformers {meta['transformers']}, kvpress {meta['kvpress']}")
    print("| context | policy | kvbench prefill tok/s | HF prefill tok/s | kvbench decode tok/s | HF decode tok/s |"
          " kvbench peak GiB | HF peak GiB | kvbench chunked prefill / decode tok/s | kvbench split-K decode tok/s |"
          " kvbench graphs decode tok/s (fused / split-K) | bound tok/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")

    def cell(r, key, scale=1.0, fmt="{:.0f}"):
        return fmt.format(r[key] / scale) if r.get(key) is not None else r.get("error", "-")[:40]
    for r in rows:
        k, h = r.get("kvbench", {"error": "not run"}), r.get("transformers", {"error": "not run"})
        ch = r.get("kvbench_chunked", {"error": "-"})
        sk = r.get("kvbench_split_k", {"error": "-"})
        ag, sg = r.get("kvbench_auto+graphs", {"error": "-"}), r.get("kvbench_split_k+graphs", {"error": "-"})
        print(f"| {r['context']} | {r['policy']} | {cell(k, 'prefill_tokens_per_s')} | {cell(h, 'prefill_tokens_per_s')} | "
              f"{cell(k, 'decode_tokens_per_s')} | {cell(h, 'decode_tokens_per_s')} | "
              f"{cell(k, 'peak_bytes', 2**30, '{:.1f}')} | {cell(h, 'peak_bytes', 2**30, '{:.1f}')} | "
              f"{cell(ch, 'prefill_tokens_per_s')} / {cell(ch, 'decode_tokens_per_s')} | {cell(sk, 'decode_tokens_per_s')} | "
              f"{cell(ag, 'decode_tokens_per_s')} / {cell(sg, 'decode_tokens_per_s')} | {cell(r, 'bound_tokens_per_s')} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kvbench", required=True)
    ap.add_argument("--workdir", required=True, help="where the random checkpoint is written (~16 GB)")
    ap.add_argument("--tokenizer", required=True, help="any sentencepiece tokenizer.model (ids are synthetic)")
    ap.add_argument("--out", default="gpu_vs_hf.json")
    ap.add_argument("--contexts", default=",".join(map(str, CONTEXTS)))
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--deadline", type=float, default=float("inf"),
                    help="seconds from the start after which no new run begins (a short device lease); "
                         "the JSON is rewritten after every run, so what finished is kept")
    ap.add_argument("--checkpoint-only", action="store_true", help="write the checkpoint and stop")
    ap.add_argument("--attention", default="auto,auto+graphs,split_k+graphs,split_k,chunked",
                    help="kvbench's variants: an attention kernel (bench --attention: auto, the fused kernel where it can; "
                         "chunked, the matmul-softmax path; split_k, kvbench's split-K decoding kernel), '+graphs' for "
                         "decoding steps as CUDA graphs (bench --cuda-graphs), comma-separated: Full runs with each (the "
                         "rows of all but the first go to 'kvbench_<variant>'), the other policies with the first")
    ap.add_argument("--policy-attention", default=None,
                    help="the variants the other policies run with, comma-separated (default: the first of --attention); "
                         "rows of all but the first go to 'kvbench_<variant>' (auto,split_k: a decoding step's statistics "
                         "from the chunked pass, its output from the split-K kernel, against auto's chunked pass; "
                         "auto,auto+graphs: each policy's steps with and without CUDA graphs)")
    ap.add_argument("--bandwidth", type=float, default=3.35e12,
                    help="the card's memory bandwidth in bytes/s for the bound column (H100 SXM: 3.35e12)")
    ap.add_argument("--print-cells", action="store_true",
                    help="print kvbench bench's --cell arguments for --policies, one per line, and stop "
                         "(gpu_check.sh --dry-run runs them on the CPU)")
    args = ap.parse_args()
    def kernel_list(option, text):
        listed = text.split(",")
        if any(k.partition("+")[0] not in KERNELS or k.partition("+")[2] not in ("", "graphs") for k in listed):
            ap.error(f"{option}: a comma-separated list of auto, chunked, split_k, each with or without '+graphs', got {text!r}")
        return listed
    kernels = kernel_list("--attention", args.attention)
    policy_kernels = kernel_list("--policy-attention", args.policy_attention) if args.policy_attention else kernels[:1]

    def first_kernel(policy):  # the row's "kvbench" entry; the other kernels go beside it
        return kernels[0] if policy == "full" else policy_kernels[0]
    if args.print_cells:
        for p in args.policies.split(","):
            print(kvbench_cell(p, first_kernel(p)))
        return
    start = time.time()
    try:
        import kvpress as presses
    except ImportError:
        presses = None
    write_checkpoint(args.workdir)
    if args.checkpoint_only:
        return
    # What a decoding step must read at least: every weight once (the shards' bytes) and the cache.
    weight_bytes = sum(os.path.getsize(os.path.join(args.workdir, f))
                       for f in os.listdir(args.workdir) if f.endswith(".safetensors"))
    import transformers
    meta = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "transformers": transformers.__version__,
            "weight_bytes": weight_bytes, "bandwidth_bytes_per_s": args.bandwidth,
            "kvpress": getattr(presses, "__version__", None) if presses else None, "budget": BUDGET, "decode": DECODE,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    contexts = list(map(int, args.contexts.split(",")))
    policies = args.policies.split(",")
    rows = {(c, p): {"context": c, "policy": p} for c in contexts for p in policies}

    def save():
        with open(args.out + ".tmp", "w") as f:
            json.dump({"meta": meta, "rows": list(rows.values())}, f, indent=2)
        os.replace(args.out + ".tmp", args.out)

    def in_time():
        return time.time() - start < args.deadline

    def kvbench_row(bench, result):
        c, p = bench["context"], bench["policy"]
        if (c, p) in rows:
            variant = variant_name(bench["attention"], bench.get("cuda_graphs", False))
            beside = variant != first_kernel(p)
            rows[(c, p)]["kvbench_" + variant if beside else "kvbench"] = result
            if not beside and result.get("decode_tokens_per_s") is not None:
                kv_bytes = result.get("kv_bytes_end") or c * KV_BYTES_PER_TOKEN
                rows[(c, p)]["bound_tokens_per_s"] = args.bandwidth / (weight_bytes + kv_bytes)
            if p != "full" and presses is None:
                rows[(c, p)]["transformers"] = {"error": "kvpress not installed: Full only"}
            print(json.dumps(rows[(c, p)]), file=sys.stderr, flush=True)
            save()

    # Order: the Full comparison first (kvbench, then transformers with the model loaded once),
    # then kvbench's compressing policies, then transformers' presses where kvpress is there.
    # kvbench loads the 16 GB checkpoint once per process: one for Full, one for the rest.
    meta["kvbench_processes"] = []
    if "full" in policies and in_time():
        full = [("full", k) for k in kernels]
        meta["kvbench_processes"].append(kvbench_run(args, contexts, full, kvbench_row, start + args.deadline))
        save()
    if "full" in policies and in_time():
        t0 = time.perf_counter()
        model = hf_load(args.workdir, "sdpa")
        meta["transformers_load_s"] = time.perf_counter() - t0
        hf_run(model, 512, "full", presses)  # warm-up: kernels, cuBLAS handles, allocator
        for c in contexts:
            if in_time():
                try:
                    rows[(c, "full")]["transformers"] = hf_run(model, c, "full", presses)
                except torch.cuda.OutOfMemoryError as e:
                    rows[(c, "full")]["transformers"] = {"error": "out of memory: " + str(e)[:200]}
                print(json.dumps(rows[(c, "full")]), file=sys.stderr, flush=True)
                save()
        del model
        torch.cuda.empty_cache()
    compressing = [p for p in policies if p != "full"]
    if compressing and in_time():
        cells = [(p, k) for p in compressing for k in policy_kernels]
        meta["kvbench_processes"].append(kvbench_run(args, contexts, cells, kvbench_row, start + args.deadline))
        save()
    if presses is not None:
        for p in policies:
            if p not in HF_PRESSES or not in_time():
                continue
            model = hf_load(args.workdir, "eager" if p == "h2o" else "sdpa")
            for c in contexts:
                if in_time():
                    try:
                        rows[(c, p)]["transformers"] = hf_run(model, c, p, presses)
                    except torch.cuda.OutOfMemoryError as e:
                        rows[(c, p)]["transformers"] = {"error": "out of memory: " + str(e)[:200]}
                    save()
            del model
            torch.cuda.empty_cache()
    save()
    print_table(meta, list(rows.values()))


if __name__ == "__main__":
    main()
