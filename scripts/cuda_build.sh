#!/usr/bin/env bash
# Builds kvbench against the PyTorch 2.x (CUDA) of a GPU machine that has no Debian packages of
# ours and no network: the Debian bookworm .debs of our other dependencies travel in .deps/
# (fetch them here with `scripts/cuda_build.sh --fetch`), are unpacked into a private prefix
# (never into /), and CMake finds Torch through the Python package's cmake_prefix_path.
# Usage on the GPU machine: scripts/cuda_build.sh [build-dir] [target...]   (default build-cuda, every
# target; naming targets, e.g. `kvbench test_models`, saves minutes of a short device lease).
# KVBENCH_CMAKE_ARGS: more configure options (e.g. -DKVBENCH_SPLIT_K=OFF); nvcc is taken from PATH,
# else /usr/local/cuda/bin (the split-K decoding kernel, models/cuda/).
set -euo pipefail
cd "$(dirname "$0")/.."
DEBS=(pkgconf pkgconf-bin libpkgconf3 pkg-config libsentencepiece-dev libsentencepiece0 nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev
      libbenchmark-dev libbenchmark1debian libutf8proc-dev libutf8proc2 libonig-dev libonig5 zlib1g-dev)
if [[ "${1:-}" == "--fetch" ]]; then
  mkdir -p .deps && (cd .deps && apt-get download "${DEBS[@]}")
  exit 0
fi
BUILD_DIR="${1:-build-cuda}"
TARGETS=("${@:2}")
PREFIX=/opt/kvbench-deps
mkdir -p "$PREFIX"
for deb in .deps/*.deb; do dpkg-deb -x "$deb" "$PREFIX"; done
LIBDIR="$PREFIX/usr/lib/x86_64-linux-gnu"
# zlib1g-dev's libz.so names bookworm's /lib/x86_64-linux-gnu/libz.so.1.2.13: use the machine's own libz.so.1.
if [[ ! -e "$LIBDIR/libz.so" ]]; then
  system_z="$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')"
  if [[ -n "$system_z" ]]; then ln -sf "$system_z" "$LIBDIR/libz.so"; fi
fi
# The .pc files and CMake configs name /usr: point them at the prefix.
grep -rl '/usr' "$LIBDIR/pkgconfig" 2>/dev/null | xargs -r sed -i "s#^prefix=/usr#prefix=$PREFIX/usr#"
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig:$PREFIX/usr/share/pkgconfig"
export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! command -v pkg-config >/dev/null; then
  mkdir -p "$PREFIX/bin" && ln -sf "$PREFIX/usr/bin/pkgconf" "$PREFIX/bin/pkg-config"
  export PATH="$PREFIX/bin:$PATH"
fi
TORCH_PREFIX="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')"
if [[ -z "${CUDACXX:-}" ]] && ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$TORCH_PREFIX;$PREFIX/usr;$LIBDIR/cmake;$PREFIX/usr/share" \
  -DCMAKE_INCLUDE_PATH="$PREFIX/usr/include" -DCMAKE_LIBRARY_PATH="$LIBDIR" \
  -DCMAKE_BUILD_RPATH="$LIBDIR" -DCMAKE_CUDA_ARCHITECTURES=90 \
  ${KVBENCH_SHARED_DIR:+-DKVBENCH_SHARED_DIR="$KVBENCH_SHARED_DIR"} ${KVBENCH_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" ${TARGETS[@]:+--target "${TARGETS[@]}"}
echo "built $BUILD_DIR (torch $(python3 -c 'import torch; print(torch.__version__)'))"
