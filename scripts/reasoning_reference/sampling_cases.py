"""The cases record_sampling.py runs through transformers' logits processors: logits, input ids and
sampling settings (each processor alone, then chains as generate() builds them)."""
import math

import numpy as np

# ----------------------------------------------------------------------------------------- cases
NEG_INF = float("-inf")

V12 = [2.0, -1.0, 0.5, 3.25, -0.75, 1.5, 0.0, -2.5, 1.0, 2.75, -0.25, 0.25]
# top-k boundary ties: sorted 5, 3, 3, 3, 2, ...
V12_TIE_K = [1.0, 5.0, 3.0, -1.0, 3.0, 0.0, 3.0, 2.0, -2.0, 0.5, -0.5, 1.5]
# tie at the maximum
V12_TIE_TOP = [1.0, 4.0, 0.0, 4.0, -1.0, 2.0, 0.5, -3.0, 1.5, 3.0, -0.5, 2.5]
V12_EQUAL = [0.75] * 12
V12_INF = [1.0, NEG_INF, 2.0, NEG_INF, 0.5, -1.0, NEG_INF, 3.0, -2.0, NEG_INF, 0.0, 1.5]
V12_TWO_FINITE = [NEG_INF, 1.0, NEG_INF, NEG_INF, 0.5, NEG_INF, NEG_INF, NEG_INF, NEG_INF, NEG_INF, NEG_INF, NEG_INF]
V12_ONE_FINITE = [NEG_INF] * 5 + [-3.0] + [NEG_INF] * 6
V12_LARGE = [1.0e30, -1.0e30, 999.5, 1.0e30 - 1.0e24, 0.0, -3.0e38, 3.0e37, -1000.0, 1.0e-30, 1000.0, -1.0e-30, 2.5e37]
V12_NEAR = [1000.0, 999.0, 998.5, 1000.0, -1000.0, 990.0, 999.75, 0.0, 995.0, 1000.0, 999.0, -5.0]
V12_TINY_PROB = [10.0, -200.0, 9.0, -150.0, 8.5, -1000.0, 7.0, -105.0, 9.5, -90.0, 0.0, -120.0]


def _logp(ps):
    return [float(np.float32(math.log(p))) if p > 0 else NEG_INF for p in ps]


# top-p boundary ties: p = 0.40, then three tokens at 0.15 each, then 0.15 spread over the rest.
V12_TIE_P = _logp([0.15, 0.40, 0.02, 0.15, 0.03, 0.02, 0.15, 0.02, 0.02, 0.02, 0.01, 0.01])
# min-p ties at rank 2: max 0.5, two tokens at 0.2 each
V12_TIE_MINP = _logp([0.02, 0.2, 0.5, 0.02, 0.2, 0.01, 0.01, 0.01, 0.01, 0.01, 0.005, 0.005])

IDS_A = [3, 1, 3, 7, 0, 1, 1]  # 3 (+3.25), 1 (-1.0), 7 (-2.5), 0 (+2.0); repeats
IDS_B = [6, 4, 9, 4, 11, 2, 6]  # 6 (0.0), 4 (-0.75), 9 (+2.75), 11 (+0.25), 2 (+0.5)
IDS_INF = [1, 3, 7, 7, 2]  # 1, 3 are -inf in V12_INF; 7 is the max


def v1000(seed, quantum=None, scale=3.0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(1000) * scale
    if quantum:
        x = np.round(x / quantum) * quantum
    return [float(v) for v in x.astype(np.float32)]


def ids1000(seed, n=200, hi=1000):
    rng = np.random.default_rng(seed)
    base = rng.integers(0, hi, size=n // 2)
    return [int(v) for v in np.concatenate([base, rng.choice(base, size=n - n // 2)])]


def S(**kw):
    s = {"repetition_penalty": 1.0, "temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": None,
         "num_beams": 1, "min_tokens_to_keep": 1}
    s.update(kw)
    return s


def cases():
    C = []

    def single_case(name, desc, proc, params, logits, ids=(0,)):
        C.append({"name": name, "description": desc, "kind": "single", "processor": proc, "params": params,
                  "logits": logits, "input_ids": list(ids)})

    def chain_case(name, desc, settings, logits, ids=(0,)):
        C.append({"name": name, "description": desc, "kind": "chain", "settings": settings,
                  "logits": logits, "input_ids": list(ids)})

    # --- single processors: repetition penalty
    R = "RepetitionPenaltyLogitsProcessor"
    single_case("rep_1.2", "penalty 1.2; repeated ids with positive (3, 0) and negative (1, 7) logits", R,
                {"penalty": 1.2}, V12, IDS_A)
    single_case("rep_0.8", "penalty 0.8 (reward); same ids", R, {"penalty": 0.8}, V12, IDS_A)
    single_case("rep_1.2_zero_logit", "penalty 1.2; id 6 has logit 0.0 (0/1.2 = 0), 4 negative, 9/11/2 positive",
                R, {"penalty": 1.2}, V12, IDS_B)
    single_case("rep_1.5_inf", "penalty 1.5 on ids whose logits are -inf (stay -inf) and the max", R,
                {"penalty": 1.5}, V12_INF, IDS_INF)
    single_case("rep_1.3_makes_tie", "penalty 1.3 on ids 1, 3: 2.6/1.3 vs 2.0 (id 0), 3.25/1.3 vs 2.5 (id 9): ties?", R,
                {"penalty": 1.3}, [2.0, 2.6, 0.0, 3.25, -1.0, 1.0, 0.5, -0.5, 1.5, 2.5, -2.0, 0.25], [1, 3, 1])
    single_case("rep_1.1_v1000", "penalty 1.1 over 200 ids with repeats, vocab 1000", R, {"penalty": 1.1},
                v1000(11), ids1000(12))
    # --- temperature
    T = "TemperatureLogitsWarper"
    single_case("temp_0.7", "temperature 0.7 (not exact in binary)", T, {"temperature": 0.7}, V12)
    single_case("temp_0.5", "temperature 0.5", T, {"temperature": 0.5}, V12)
    single_case("temp_1.3_inf", "temperature 1.3 with -inf entries", T, {"temperature": 1.3}, V12_INF)
    single_case("temp_1e-4_large", "temperature 1e-4 on large/small magnitudes (values may overflow to inf)",
                T, {"temperature": 0.0001}, V12_NEAR)
    single_case("temp_0.6_v1000", "temperature 0.6, vocab 1000", T, {"temperature": 0.6}, v1000(13))
    # --- top-k
    K = "TopKLogitsWarper"
    single_case("topk_3", "top_k 3, distinct values", K, {"top_k": 3}, V12)
    single_case("topk_3_boundary_tie", "top_k 3 with the 2nd..4th values equal (3.0 x3): all ties kept", K,
                {"top_k": 3}, V12_TIE_K)
    single_case("topk_2_boundary_tie", "top_k 2 with the 2nd..4th values equal", K, {"top_k": 2}, V12_TIE_K)
    single_case("topk_1_top_tie", "top_k 1 with two equal maxima", K, {"top_k": 1}, V12_TIE_TOP)
    single_case("topk_50_gt_vocab", "top_k 50 > vocab 12 (clamped to 12)", K, {"top_k": 50}, V12)
    single_case("topk_5_only_2_finite", "top_k 5 when only 2 entries are finite (k-th value is -inf)", K,
                {"top_k": 5}, V12_TWO_FINITE)
    single_case("topk_3_all_equal", "top_k 3 on all-equal logits: everything kept", K, {"top_k": 3}, V12_EQUAL)
    single_case("topk_3_mtk5", "top_k 3 with min_tokens_to_keep 5 (effective k = 5)", K,
                {"top_k": 3, "min_tokens_to_keep": 5}, V12)
    single_case("topk_40_v1000_quantized", "top_k 40 on vocab 1000 logits quantized to 1/4 (many ties)", K,
                {"top_k": 40}, v1000(14, quantum=0.25))
    # --- top-p
    P = "TopPLogitsWarper"
    single_case("topp_0.9", "top_p 0.9, distinct values", P, {"top_p": 0.9}, V12)
    single_case("topp_0.6_boundary_tie", "top_p 0.6: cut falls inside three tokens of p=0.15", P, {"top_p": 0.6},
                V12_TIE_P)
    single_case("topp_0.7_boundary_tie", "top_p 0.7: cut inside the tie group (1 of 3 removed?)", P,
                {"top_p": 0.7}, V12_TIE_P)
    single_case("topp_0.75_tie_groups_whole", "top_p 0.75: the 0.15 tie group wholly kept, the 0.02 group wholly removed",
                P, {"top_p": 0.75}, V12_TIE_P)
    single_case("topp_0.9_knife_edge", "top_p 0.9: cumulative 0.1 meets float32(1 - 0.9) inside the 0.02 tie group",
                P, {"top_p": 0.9}, V12_TIE_P)
    single_case("topp_1.0", "top_p 1.0 applied directly (generate would not add it): removes only p == 0", P,
                {"top_p": 1.0}, V12_TINY_PROB)
    single_case("topp_0.0", "top_p 0.0: everything but min_tokens_to_keep removed", P, {"top_p": 0.0}, V12)
    single_case("topp_0.0_top_tie", "top_p 0.0 with two equal maxima: one survives (sort order decides)", P,
                {"top_p": 0.0}, V12_TIE_TOP)
    single_case("topp_0.5_all_equal", "top_p 0.5 on 12 equal logits", P, {"top_p": 0.5}, V12_EQUAL)
    single_case("topp_0.3_mtk2", "top_p 0.3 with min_tokens_to_keep 2 (beam setting)", P,
                {"top_p": 0.3, "min_tokens_to_keep": 2}, V12)
    single_case("topp_0.8_inf", "top_p 0.8 with -inf entries", P, {"top_p": 0.8}, V12_INF)
    single_case("topp_0.95_v1000_quantized", "top_p 0.95, vocab 1000 quantized to 1/8", P, {"top_p": 0.95},
                v1000(15, quantum=0.125))
    # --- min-p
    M = "MinPLogitsWarper"
    single_case("minp_0.1", "min_p 0.1, distinct values", M, {"min_p": 0.1}, V12)
    single_case("minp_0.0", "min_p 0.0: nothing removed", M, {"min_p": 0.0}, V12)
    single_case("minp_1.0_top_tie", "min_p 1.0 with two equal maxima: both kept (strict <)", M, {"min_p": 1.0},
                V12_TIE_TOP)
    single_case("minp_0.4_rank2_tie", "min_p 0.4: two tokens at p=0.2 vs max 0.5 (0.2 >= 0.2 ?)", M,
                {"min_p": 0.4}, V12_TIE_MINP)
    single_case("minp_0.5_mtk2_rank2_tie", "min_p 0.5, min_tokens_to_keep 2: rank-2 tie, one forced back", M,
                {"min_p": 0.5, "min_tokens_to_keep": 2}, V12_TIE_MINP)
    single_case("minp_0.05_inf", "min_p 0.05 with -inf entries", M, {"min_p": 0.05}, V12_INF)
    single_case("minp_0.05_v1000", "min_p 0.05, vocab 1000 quantized to 1/4", M, {"min_p": 0.05},
                v1000(16, quantum=0.25))

    # --- full chains as _get_logits_processor builds them (do_sample=True)
    chain_case("chain_genconfig_defaults_v12", "GenerationConfig defaults + do_sample: only TopK(50)",
               S(top_k=50), V12)
    chain_case("chain_genconfig_defaults_v1000", "GenerationConfig defaults + do_sample: only TopK(50), vocab 1000",
               S(top_k=50), v1000(21))
    chain_case("chain_nothing", "all neutral (top_k 0, top_p 1.0, temperature 1.0): empty chain", S(), V12)
    chain_case("chain_qwen3_thinking_v1000", "temperature 0.6, top_k 20, top_p 0.95, min_p 0.0",
               S(temperature=0.6, top_k=20, top_p=0.95, min_p=0.0), v1000(22))
    chain_case("chain_qwen3_nonthinking_v1000", "temperature 0.7, top_k 20, top_p 0.8, rep 1.05",
               S(repetition_penalty=1.05, temperature=0.7, top_k=20, top_p=0.8), v1000(23), ids1000(24))
    chain_case("chain_all_five_v12", "rep 1.2, temperature 0.8, top_k 5, top_p 0.9, min_p 0.05",
               S(repetition_penalty=1.2, temperature=0.8, top_k=5, top_p=0.9, min_p=0.05), V12, IDS_A)
    chain_case("chain_rep0.8_topp_v12", "rep 0.8, temperature 1.3, top_p 0.7 (top_k disabled)",
               S(repetition_penalty=0.8, temperature=1.3, top_p=0.7), V12, IDS_A)
    chain_case("chain_topk_ties_topp", "top_k 3 with boundary ties then top_p 0.8",
               S(top_k=3, top_p=0.8), V12_TIE_K)
    chain_case("chain_topp_boundary_tie", "temperature 1.0, top_k 50, top_p 0.6 with tied boundary",
               S(top_k=50, top_p=0.6), V12_TIE_P)
    chain_case("chain_minp_tie", "top_k 10, min_p 0.4 with rank-2 ties", S(top_k=10, min_p=0.4), V12_TIE_MINP)
    chain_case("chain_inf", "-inf entries: rep 1.2, temperature 0.7, top_k 4, top_p 0.9",
               S(repetition_penalty=1.2, temperature=0.7, top_k=4, top_p=0.9), V12_INF, IDS_INF)
    chain_case("chain_two_finite", "only 2 finite: top_k 5, top_p 0.5", S(top_k=5, top_p=0.5), V12_TWO_FINITE)
    chain_case("chain_one_finite", "only 1 finite: temperature 0.5, top_k 3, top_p 0.9, min_p 0.1",
               S(temperature=0.5, top_k=3, top_p=0.9, min_p=0.1), V12_ONE_FINITE)
    chain_case("chain_all_equal", "all-equal logits: top_k 5 then top_p 0.5",
               S(top_k=5, top_p=0.5), V12_EQUAL)
    chain_case("chain_all_equal_topk_only", "all-equal logits: temperature 0.7, top_k 5",
               S(temperature=0.7, top_k=5), V12_EQUAL)
    chain_case("chain_topk_gt_vocab_topp", "top_k 50 > vocab, top_p 0.5", S(top_k=50, top_p=0.5), V12)
    chain_case("chain_large_values", "large/small magnitudes: temperature 0.5, top_k 6, top_p 0.99",
               S(temperature=0.5, top_k=6, top_p=0.99), V12_LARGE)
    chain_case("chain_near_values_tiny_temp", "values near 1000 with ties at max, temperature 1e-4, top_k 3",
               S(temperature=0.0001, top_k=3), V12_NEAR)
    chain_case("chain_tiny_probs_topp", "probabilities that underflow: top_p 0.999, min_p 0.001",
               S(top_p=0.999, min_p=0.001), V12_TINY_PROB)
    chain_case("chain_high_temp", "temperature 2.0, top_k 8, top_p 0.95", S(temperature=2.0, top_k=8, top_p=0.95),
               V12)
    chain_case("chain_rep_greedy_tie", "rep 1.3 creates a tie at the max for greedy (2.6/1.3 vs 2.0)",
               S(repetition_penalty=1.3, top_k=3),
               [2.0, 2.6, 0.0, 1.0, -1.0, 1.0, 0.5, -0.5, 1.5, 0.75, -2.0, 0.25], [1])
    chain_case("chain_beams_mtk2", "num_beams 2 -> min_tokens_to_keep 2: top_k 1, top_p 0.1, min_p 0.9",
               S(top_k=1, top_p=0.1, min_p=0.9, num_beams=2, min_tokens_to_keep=2), V12)
    chain_case("chain_quantized_v1000", "vocab 1000 quantized to 1/4: rep 1.1, temperature 0.8, top_k 40, top_p 0.9",
               S(repetition_penalty=1.1, temperature=0.8, top_k=40, top_p=0.9), v1000(25, quantum=0.25),
               ids1000(26))
    chain_case("chain_quantized_minp_v1000", "vocab 1000 quantized to 1/2: top_k 100, min_p 0.1",
               S(top_k=100, min_p=0.1), v1000(27, quantum=0.5))
    chain_case("chain_topp_only_v1000", "vocab 1000: top_p 0.9 only", S(top_p=0.9), v1000(28, scale=2.0))
    return C
