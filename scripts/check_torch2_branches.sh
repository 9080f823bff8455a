#!/usr/bin/env bash
# Compiles (syntax and types only) the code that only a libtorch 2.x (CUDA) build sees: the
# `#if TORCH_VERSION_MAJOR >= 2` branches (fused SDPA attention, 2.0–2.4 and 2.5+), the CUDA
# tests' synchronisation-debug block and split-K tests, the CUDA allocator statistics
# (models/device_memory.cpp), the CUDA graphs of a decoding step (models/captured_pieces.cpp) and
# the split-K kernel's wrapper and its use in attention
# (KVBENCH_SPLIT_K_DECODE), against the 1.13 headers here with a stand-in 2.x version header
# (tests/fixtures/torch2_standin); the kernel itself (models/cuda/split_k_decode.cu) with nvcc, for
# the H100 (sm_90), to an object file. A GPU lease is short and rare: a typo in those branches
# should fail here, not there. The CUDA headers and nvcc come from /usr/local/cuda (skipped without them).
# Usage: scripts/check_torch2_branches.sh [TORCH_INCLUDE_DIR...]   (default: Debian's libtorch 1.13;
# ctest passes CMake's TORCH_INCLUDE_DIRS; exit status 1 on the first error)
set -euo pipefail
cd "$(dirname "$0")/.."
standin=tests/fixtures/torch2_standin
includes=("${@:-/usr/include /usr/include/torch/csrc/api/include}")
flags=(-std=gnu++17 -fsyntax-only -D_GLIBCXX_USE_CXX11_ABI=1 -Wall -Wextra -Wno-unused-parameter -Werror
       -I"$standin" -I. -Itests -DKVBENCH_TESTS_DIR=\"$PWD/tests\")
for dir in ${includes[@]}; do
  [[ "$dir" == /usr/include ]] || flags+=(-isystem "$dir")  # a system dir as -isystem breaks #include_next
done
for minor in 3 11; do
  g++ "${flags[@]}" -DKVBENCH_STANDIN_MINOR=$minor -DKVBENCH_SPLIT_K_DECODE=1 models/attention.cpp
  echo "models/attention.cpp: 2.$minor branches compile, with the split-K path"
done
if [[ -f /usr/local/cuda/include/cuda_runtime_api.h ]]; then
  g++ "${flags[@]}" -DKVBENCH_STANDIN_MINOR=11 -DKVBENCH_SPLIT_K_DECODE=1 -I/usr/local/cuda/include tests/models/cuda_test.cpp
  echo "tests/models/cuda_test.cpp: the 2.x synchronisation-debug block and the split-K tests compile"
  g++ "${flags[@]}" -DKVBENCH_STANDIN_MINOR=11 -I/usr/local/cuda/include models/cuda/split_k_decode.cpp
  echo "models/cuda/split_k_decode.cpp: compiles"
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then
    object=$(mktemp --suffix=.o)
    /usr/local/cuda/bin/nvcc -std=c++17 -arch=sm_90 -Werror all-warnings -I. -c models/cuda/split_k_decode.cu -o "$object"
    rm -f "$object"
    echo "models/cuda/split_k_decode.cu: compiles for sm_90"
  else
    echo "models/cuda/split_k_decode.cu: skipped (no /usr/local/cuda/bin/nvcc)"
  fi
  g++ "${flags[@]}" -DKVBENCH_STANDIN_MINOR=11 -DKVBENCH_CUDA_GRAPHS=1 -I/usr/local/cuda/include models/captured_pieces.cpp
  echo "models/captured_pieces.cpp: the CUDA graphs branch compiles"
  g++ "${flags[@]}" -DKVBENCH_STANDIN_MINOR=11 -DKVBENCH_C10_CUDA=1 -I/usr/local/cuda/include models/device_memory.cpp
  echo "models/device_memory.cpp: the CUDA allocator branch compiles"
else
  echo "tests/models/cuda_test.cpp: skipped (no /usr/local/cuda/include/cuda_runtime_api.h)"
fi
