#!/usr/bin/env bash
# The GPU check (issue 44, part 3): on one lent GPU machine, in about 5 minutes, build the
# cuda backend, run the cuda tests, and for the six benchmark models and PyTorch's exports
# of ResNeXt-50, ResNet-50, Inception-v3 and a transformer layer (opset 17: LayerNormalization,
# the packed projection's slices, linear layers on rank-3 activations): taso-opt --target
# cuda, the input (A) and the output (B) timed in turn in one process per round (taso-run
# --executor cuda --against), their outputs compared, each one's time per operator beside
# the cuda cost model's price (taso-run --profile), and PyTorch eager timed where torch
# sees the GPU. One table at the end.
#
# HOW TO RUN IT (a session that is lent a GPU):
#   1. Here, with the package registry:   bash bench/gpu_prepare.sh
#      (Debian 12 .deb files of the libraries into bench/gpu_debs/, ignored, 22.5 MiB)
#   2. One call of the device tool `run`:
#        command:   PYTHONUNBUFFERED=1 GPU_CHECK_BUDGET_S=440 GPU_CHECK_MODELS="bert resnet50
#                   nasrnn inception_v3 resnext50 tv_resnet50 tv_transformer_layer_17 nasnet_a"
#                   bash bench/gpu_check.sh
#                   (one line)
#        carry:     ["bench/gpu_debs"]
#        timeout_s: 590
#      It starts no model after GPU_CHECK_BUDGET_S and keeps 40 s for PyTorch eager where a
#      tv_ model is listed (timeout_s is the hard stop). The machine starts in about 30 s,
#      so one such call leaves about 7 minutes of the 15: enough for a second call on a
#      fresh machine (it builds again) with GPU_CHECK_BUDGET_S=290, timeout_s 395, for the
#      models not reached or to check a fix. Give the machine back (give_back) unless you
#      call again at once: it goes back after 30 s idle anyway.
#   3. $OUT comes back with gpu_check.md (the table), gpu_check.log (everything printed)
#      and raw.tar.gz (each step's log, taso-opt's reports, taso-run's outputs and
#      profiles). The figures go into bench/RESULTS.md.
#   Sizing, measured on an H200 (bench/RESULTS.md, "A second GPU check"): unpacking and
#   configuring 30 s, the build 52-54 s, the cuda tests 20-24 s, each model 26-77 s
#   (taso-opt 7-56 s, most of it the speed check; the timing rounds and the profiles);
#   the first call above reached six models in 423 s. NasNet-A's taso-opt ran past 181 s
#   once, so it comes last. The timing rounds were one process per model and round then;
#   they are one taso-run --against process per round now (not yet sized on a GPU).
#
# What the GPU machine was seen to have (issue 44): nvcc 13.0 at /usr/local/cuda; cuDNN and
# cuBLAS only under Python's site-packages (nvidia/...; libcudnn.so.9 with no unversioned
# link); CMake 4, g++ 13, ninja; no pkg-config, protobuf, ONNX, abseil, oneDNN, Z3,
# SQLite, jemalloc or Catch2; no package registry. So the debs are unpacked into a prefix
# (GPU_CHECK_PREFIX, not /), their pkg-config files pointed at it, the CUDA libraries
# looked for in the toolkit and then in site-packages (unversioned links made in
# BUILD/cuda-links), and all of it passed to CMake explicitly.
#
# Without a GPU (as on the project's own machine) it does everything else: unpacks the
# debs, configures and builds with CUDA (compiles and links), runs the test binary (the
# cuda tests then say the GPU is missing and pass), exports the torchvision models where
# torch is importable, and reports each GPU-only step as "no GPU" instead of failing.
#
# Settings (environment):
#   GPU_CHECK_MODELS     models in order (default: bert resnet50 nasrnn inception_v3
#                        resnext50 tv_resnext50 tv_resnet50 tv_inception_v3
#                        tv_transformer_layer_17 nasnet_a; tv_NAME:
#                        tests/python/export_torch_models.py's NAME exported by torch there)
#   GPU_CHECK_BUDGET_S   seconds after which no further model is started (default 270)
#   GPU_CHECK_ROUNDS     timing rounds, each one taso-run --against process, the input first
#                        in odd rounds (default 3)
#   GPU_CHECK_RUNS       runs per model and round (taso-run --time; default 50)
#   GPU_CHECK_OPT_FLAGS  extra taso-opt flags (default none: the defaults are what is judged)
#   GPU_CHECK_JOBS       build jobs (default: all cores); GPU_CHECK_BUILD (default build-gpu)
#   GPU_CHECK_DEBS       the .deb folder (default bench/gpu_debs); GPU_CHECK_SYSTEM_DEPS=1:
#                        use the libraries installed on this machine instead
#   GPU_CHECK_PREFIX     where the debs are unpacked (default /tmp/taso-gpu-deps)
#   GPU_CHECK_CUDA_ARCH  CMAKE_CUDA_ARCHITECTURES (default: the GPU's, else 90)
#   GPU_CHECK_NVIDIA_SITE  a site-packages folder to look for nvidia/ libraries in first
#   GPU_CHECK_PYTHON     the Python with torch (default python3)
#   GPU_CHECK_TARGET     cuda (default), or cpu: the same loop on the cpu target and
#                        executor, to try this script where no GPU is
#   OUT                  where the results go (set by the device tool; default
#                        BUILD/gpu_check_out)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
T0=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET_S:-270}
ROUNDS=${GPU_CHECK_ROUNDS:-3}
RUNS=${GPU_CHECK_RUNS:-50}
JOBS=${GPU_CHECK_JOBS:-$(nproc)}
BUILD=${GPU_CHECK_BUILD:-build-gpu}
DEBS=${GPU_CHECK_DEBS:-bench/gpu_debs}
PREFIX=${GPU_CHECK_PREFIX:-/tmp/taso-gpu-deps}
PY=${GPU_CHECK_PYTHON:-python3}
TARGET=${GPU_CHECK_TARGET:-cuda}
read -r -a MODELS <<< "${GPU_CHECK_MODELS:-bert resnet50 nasrnn inception_v3 resnext50 tv_resnext50 tv_resnet50 tv_inception_v3 tv_transformer_layer_17 nasnet_a}"
read -r -a OPT_FLAGS <<< "${GPU_CHECK_OPT_FLAGS:-}"
RESULTS=${OUT:-$ROOT/$BUILD/gpu_check_out}
WORK=$(mktemp -d /tmp/taso-gpu-check.XXXXXX)
# taso-opt and taso-run's cost cache: measured afresh in each run of this script.
export XDG_CACHE_HOME=$WORK/cache
mkdir -p "$RESULTS" "$WORK/logs" "$WORK/models" "$WORK/bin"
ORIG_LD=${LD_LIBRARY_PATH:-}
EAGER_RESERVE=40   # seconds kept for PyTorch eager after the models
MODEL_MIN=35       # a model is started only with this much left before the budget

exec > >(tee -a "$RESULTS/gpu_check.log") 2>&1

el() { echo $(($(date +%s) - T0)); }
step() { printf '\n== [%3ds] %s\n' "$(el)" "$*"; }
note() { echo "   $*"; }
finish() {
  if [ -s "$WORK/table.py" ]; then
    "$PY_STD" "$WORK/table.py" "$WORK" "$TARGET" "${MODELS[@]}" > "$RESULTS/gpu_check.md" 2>>"$WORK/logs/table.log" ||
      echo "gpu_check: the table could not be made (logs/table.log)"
  fi
  cp "$RESULTS/gpu_check.md" "$WORK/logs/" 2>/dev/null
  tar -czf "$RESULTS/raw.tar.gz" -C "$WORK" logs 2>/dev/null
}
die() {
  echo "gpu_check: error: $*"
  finish
  echo "gpu_check: stopped after $(el) s; results so far in $RESULTS"
  exit 1
}
# Seconds left before the budget.
left() { echo $((BUDGET - $(el))); }
PY_STD=python3   # any Python 3 for the table (standard library only)
command -v python3 >/dev/null || PY_STD=$PY

# ---------------------------------------------------------------------------------------
step "machine"
note "$(nproc) cores, $(uname -m), kernel $(uname -r); results in $RESULTS; work in $WORK"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/   GPU: /'
else
  note "nvidia-smi: not found"
fi
for tool in g++ cmake ninja; do
  if command -v $tool >/dev/null; then note "$tool: $($tool --version | head -1)"; else note "$tool: not found"; fi
done
command -v g++ >/dev/null || die "no g++: the build needs a C++ compiler"
command -v cmake >/dev/null || die "no cmake"

# ---------------------------------------------------------------------------------------
step "libraries: the Debian 12 packages"
if [ "${GPU_CHECK_SYSTEM_DEPS:-0}" = 1 ]; then
  note "GPU_CHECK_SYSTEM_DEPS=1: using the libraries installed on this machine"
  DEP_ARGS=()
else
  shopt -s nullglob
  debs=("$DEBS"/*.deb)
  shopt -u nullglob
  [ ${#debs[@]} -gt 0 ] || die "no .deb files in $DEBS: run 'bash bench/gpu_prepare.sh' where the package registry is, and carry bench/gpu_debs"
  rm -rf "$PREFIX" && mkdir -p "$PREFIX" || die "cannot make $PREFIX"
  for f in "${debs[@]}"; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$f" "$PREFIX" || die "dpkg-deb -x $f failed"
    else  # ar and tar: a .deb is an ar archive holding data.tar.*
      member=$(ar t "$f" | grep '^data\.tar') || die "$f: no data.tar in it"
      ar p "$f" "$member" > "$WORK/$member" && tar -xf "$WORK/$member" -C "$PREFIX" || die "unpacking $f failed"
      rm -f "$WORK/$member"
    fi
  done
  note "${#debs[@]} packages unpacked into $PREFIX ($(du -sm "$PREFIX" | cut -f1) MB)"
  LIBDIR=$PREFIX/usr/lib/x86_64-linux-gnu
  # The pkg-config files name /usr: point them at the prefix.
  for pc in "$LIBDIR"/pkgconfig/*.pc "$PREFIX"/usr/share/pkgconfig/*.pc; do
    sed -i "s#^\([A-Za-z_]*\)=/usr#\1=$PREFIX/usr#" "$pc"
  done
  for f in usr/bin/protoc usr/bin/pkgconf usr/include/google/protobuf/message.h usr/include/onnx/onnx_pb.h \
           usr/include/absl/status/status.h usr/include/oneapi/dnnl/dnnl.hpp usr/include/CL/cl.h usr/include/z3.h \
           usr/include/sqlite3.h usr/include/jemalloc/jemalloc.h usr/include/catch2/catch.hpp \
           usr/lib/x86_64-linux-gnu/cmake/ONNX usr/lib/x86_64-linux-gnu/cmake/absl usr/lib/x86_64-linux-gnu/cmake/dnnl \
           usr/lib/cmake/Catch2 usr/lib/x86_64-linux-gnu/libprotobuf.so usr/lib/x86_64-linux-gnu/libonnx.so \
           usr/lib/x86_64-linux-gnu/libdnnl.so.2 usr/lib/x86_64-linux-gnu/libz3.so usr/lib/x86_64-linux-gnu/libsqlite3.so \
           usr/lib/x86_64-linux-gnu/libOpenCL.so.1; do
    [ -e "$PREFIX/$f" ] || die "$f is missing from the unpacked packages (bench/gpu_prepare.sh's list)"
  done
  export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PKG_CONFIG_LIBDIR=$LIBDIR/pkgconfig:$PREFIX/usr/share/pkgconfig
  "$PREFIX/usr/bin/protoc" --version >/dev/null 2>&1 || die "the unpacked protoc does not run: $("$PREFIX/usr/bin/protoc" --version 2>&1 | head -1)"
  "$PREFIX/usr/bin/pkgconf" --exists z3 sqlite3 jemalloc || die "the unpacked pkgconf does not find z3, sqlite3 and jemalloc"
  note "protoc $("$PREFIX/usr/bin/protoc" --version | awk '{print $2}'), z3 $("$PREFIX/usr/bin/pkgconf" --modversion z3), sqlite $("$PREFIX/usr/bin/pkgconf" --modversion sqlite3)"
  DEP_ARGS=(-DCMAKE_PREFIX_PATH="$PREFIX/usr" -DPKG_CONFIG_EXECUTABLE="$PREFIX/usr/bin/pkgconf"
            -DProtobuf_PROTOC_EXECUTABLE="$PREFIX/usr/bin/protoc")
fi

# ---------------------------------------------------------------------------------------
step "CUDA: nvcc, cuDNN, cuBLAS"
NVCC=${CUDACXX:-}
if [ -z "$NVCC" ]; then
  for c in /usr/local/cuda/bin/nvcc "$(command -v nvcc 2>/dev/null)"; do
    [ -n "$c" ] && [ -x "$c" ] && { NVCC=$c; break; }
  done
fi
[ -n "$NVCC" ] || die "no nvcc (looked at /usr/local/cuda/bin and PATH; set CUDACXX)"
CUDA_ROOT=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
note "nvcc: $NVCC ($("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')), toolkit $CUDA_ROOT"
TK_LIBS=("$CUDA_ROOT/lib64" "$CUDA_ROOT/lib" "$CUDA_ROOT/targets/x86_64-linux/lib")
TK_INCS=("$CUDA_ROOT/include" "$CUDA_ROOT/targets/x86_64-linux/include")
# Python's site-packages folders, where pip's nvidia-* wheels put the libraries.
SITES=()
[ -n "${GPU_CHECK_NVIDIA_SITE:-}" ] && SITES+=("$GPU_CHECK_NVIDIA_SITE")
if command -v "$PY" >/dev/null; then
  while IFS= read -r s; do [ -d "$s/nvidia" ] && SITES+=("$s"); done < <(
    env LD_LIBRARY_PATH="$ORIG_LD" "$PY" -c 'import site, sys
print("\n".join(p for p in sys.path + site.getsitepackages() if p.endswith(("site-packages", "dist-packages"))))' 2>/dev/null)
fi
# find_cuda FILE-GLOB -> the first match in the toolkit, else under site-packages' nvidia/.
find_cuda() {
  local d hit
  for d in "${TK_LIBS[@]}" "${TK_INCS[@]}"; do
    hit=$(ls -d "$d"/$1 2>/dev/null | sort | head -1); [ -n "$hit" ] && { echo "$hit"; return 0; }
  done
  for d in "${SITES[@]}"; do
    hit=$(find "$d/nvidia" -maxdepth 4 -name "$1" 2>/dev/null | sort | head -1); [ -n "$hit" ] && { echo "$hit"; return 0; }
  done
  return 1
}
LINKS=$ROOT/$BUILD/cuda-links   # beside the build, so a second run links the same paths
mkdir -p "$LINKS"
# link_for NAME FILE -> FILE if it is NAME.so, else an unversioned link to it in LINKS.
link_for() {
  case "$2" in */"$1".so) echo "$2" ;; *) ln -sf "$2" "$LINKS/$1.so" && echo "$LINKS/$1.so" ;; esac
}
CUDA_ARGS=()
CXX_EXTRA=""
RUNTIME_DIRS=()
cudnn_h=$(find_cuda cudnn.h) || die "cuDNN's cudnn.h not found (toolkit $CUDA_ROOT, site-packages: ${SITES[*]:-none})"
cudnn_so=$(find_cuda 'libcudnn.so') || cudnn_so=$(find_cuda 'libcudnn.so.[0-9]*') ||
  die "cuDNN's libcudnn.so not found (toolkit $CUDA_ROOT, site-packages: ${SITES[*]:-none})"
cudnn_v=$(sed -n 's/^#define CUDNN_\(MAJOR\|MINOR\|PATCHLEVEL\) *\([0-9]*\).*/\2/p' "$(dirname "$cudnn_h")/cudnn_version.h" 2>/dev/null | paste -sd.)
CUDA_ARGS+=(-DCUDNN_INCLUDE_DIR="$(dirname "$cudnn_h")" -DCUDNN_LIBRARY="$(link_for libcudnn "$cudnn_so")")
RUNTIME_DIRS+=("$(dirname "$(readlink -f "$cudnn_so")")")
note "cuDNN ${cudnn_v:-?}: $(dirname "$cudnn_h"), $cudnn_so"
for lib in cudart cublas cublasLt; do
  so=$(find_cuda "lib$lib.so") || so=$(find_cuda "lib$lib.so.[0-9]*") || die "lib$lib not found (toolkit $CUDA_ROOT, site-packages: ${SITES[*]:-none})"
  CUDA_ARGS+=("-DCUDA_${lib}_LIBRARY=$(link_for "lib$lib" "$so")")  # named even when in the toolkit: a rerun resets it
  RUNTIME_DIRS+=("$(dirname "$(readlink -f "$so")")")
  note "$lib: $so"
done
cublas_h=$(find_cuda cublas_api.h) || die "cuBLAS's cublas_api.h not found"
case "$cublas_h" in "$CUDA_ROOT"/*) ;; *) CXX_EXTRA="-isystem $(dirname "$cublas_h")" ;; esac
note "cuBLAS headers: $(dirname "$cublas_h")"
# The folders the programs load the CUDA libraries from (cuDNN 9 loads its parts itself).
for d in $(printf '%s\n' "${RUNTIME_DIRS[@]}" | awk '!seen[$0]++'); do
  case ":$LD_LIBRARY_PATH:" in *":$d:"*) ;; *) export LD_LIBRARY_PATH=$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ;; esac
done
ARCH=${GPU_CHECK_CUDA_ARCH:-}
if [ -z "$ARCH" ]; then
  ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  [[ "$ARCH" =~ ^[0-9]+$ ]] || ARCH=90
fi
note "CUDA architectures: $ARCH"

# ---------------------------------------------------------------------------------------
# The torchvision exports need no build: started now, on the CPU, beside the build.
TORCH=0
TV=()
for m in "${MODELS[@]}"; do case "$m" in tv_*) TV+=("${m#tv_}") ;; esac; done
if env LD_LIBRARY_PATH="$ORIG_LD" "$PY" -c 'import torch, torchvision' >/dev/null 2>&1; then
  TORCH=1
  note "torch: $(env LD_LIBRARY_PATH="$ORIG_LD" "$PY" -c 'import torch, torchvision; print(torch.__version__, "torchvision", torchvision.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1)"
else
  note "torch: not importable by $PY: the PyTorch exports and PyTorch eager are skipped"
fi
cat > "$WORK/export.py" <<'EOF'
# Exports tests/python/export_torch_models.py's models (its builders, weights and opsets)
# with the TorchScript exporter where this torch still has it, else with dynamo at opset 18.
import inspect, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "python"))
import torch
import export_torch_models as e
original = torch.onnx.export
HOW = {}
def export(*args, **kwargs):
    if "dynamo" not in inspect.signature(original).parameters:
        HOW["how"] = "TorchScript exporter"
        return original(*args, **kwargs)
    try:
        HOW["how"] = "TorchScript exporter (dynamo=False)"
        return original(*args, dynamo=False, **kwargs)
    except Exception as err:  # no TorchScript exporter any more
        print(f"   TorchScript exporter failed ({type(err).__name__}: {str(err)[:200]}); dynamo=True at opset 18")
        kwargs["opset_version"] = max(18, kwargs.get("opset_version") or 18)
        HOW["how"] = "dynamo exporter, opset 18"
        return original(*args, dynamo=True, **kwargs)
torch.onnx.export = export
out = sys.argv[2]
for name in sys.argv[3:]:
    try:
        e.export(name, out)
        os.replace(os.path.join(out, name + ".onnx"), os.path.join(out, "tv_" + name + ".onnx"))
        print(f"   exported tv_{name} ({HOW.get('how')}, torch {torch.__version__})", flush=True)
    except Exception as err:
        print(f"   tv_{name}: export failed: {type(err).__name__}: {str(err)[:300]}", flush=True)
EOF
EXPORT_PID=""
if [ ${#TV[@]} -gt 0 ] && [ "$TORCH" = 1 ]; then
  (cd "$WORK" && CUDA_VISIBLE_DEVICES="" LD_LIBRARY_PATH="$ORIG_LD" nice -n 5 "$PY" "$WORK/export.py" "$ROOT" "$WORK/models" "${TV[@]}" \
     > "$WORK/logs/export.log" 2>&1) &
  EXPORT_PID=$!
fi

# ---------------------------------------------------------------------------------------
step "configure ($BUILD)"
CMAKE_ARGS=(-S . -B "$BUILD")
if [ ! -f "$BUILD/CMakeCache.txt" ]; then   # else as configured before
  if command -v ninja >/dev/null; then CMAKE_ARGS+=(-G Ninja); else CMAKE_ARGS+=(-G "Unix Makefiles"); fi
fi
# A unity build, as scripts/build.sh and CI build (a third of the compiler time, and the
# same translation units CI compiled).
CMAKE_ARGS+=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON -DCMAKE_CUDA_COMPILER="$NVCC"
            -DCUDAToolkit_ROOT="$CUDA_ROOT" -DCMAKE_CUDA_ARCHITECTURES="$ARCH" -DCMAKE_CXX_FLAGS="$CXX_EXTRA"
            "${DEP_ARGS[@]}" "${CUDA_ARGS[@]}")
cmake_major=$(cmake --version | sed -n 's/^cmake version \([0-9]*\).*/\1/p')
[ "${cmake_major:-3}" -ge 4 ] && CMAKE_ARGS+=(-DCMAKE_POLICY_VERSION_MINIMUM=3.5)  # old configs in the debs
echo "   cmake ${CMAKE_ARGS[*]}" > "$WORK/logs/configure.log"
if ! cmake "${CMAKE_ARGS[@]}" >> "$WORK/logs/configure.log" 2>&1; then
  grep -v '^--' "$WORK/logs/configure.log" | tail -25 | sed 's/^/   | /'
  die "configure failed (logs/configure.log)"
fi
grep -q "taso: CUDA backend enabled" "$WORK/logs/configure.log" ||
  die "configured without the CUDA backend: $(grep 'taso:' "$WORK/logs/configure.log")"
grep "taso: CUDA backend enabled" "$WORK/logs/configure.log" | sed 's/^-- /   /'

step "build taso-models taso-opt taso-run taso_tests (-j$JOBS)"
if ! cmake --build "$BUILD" -j "$JOBS" --target taso-models taso-opt taso-run taso_tests > "$WORK/logs/build.log" 2>&1; then
  grep -E 'error|Error|FAILED' "$WORK/logs/build.log" | head -20 | sed 's/^/   | /'
  die "build failed (logs/build.log)"
fi
note "built (at $(el) s)"

# ---------------------------------------------------------------------------------------
step "backends"
"$BUILD/taso-run" --backends 2>&1 | tee "$WORK/logs/backends.log" | sed 's/^/   /'
GPU=0
grep -Eq '^cuda +usable' "$WORK/logs/backends.log" && GPU=1
[ "$GPU" = 1 ] || note "no GPU: the cuda backend is built but cannot run here ($(awk '$1 == "cuda" { $1 = $2 = ""; sub(/^ +/, ""); print }' "$WORK/logs/backends.log"))"

step "cuda tests (taso_tests [#cuda_executor_test] [#backends_test])"
if timeout 240 "$BUILD/taso_tests" --filenames-as-tags '[#cuda_executor_test],[#backends_test]' > "$WORK/logs/tests.log" 2>&1; then
  TESTS="passed"
else
  TESTS="FAILED"
fi
grep -E 'cuda backend not usable|^All tests passed|^test cases:|assertions:' "$WORK/logs/tests.log" | sort | uniq -c | sed 's/^ */   /'
[ "$GPU" = 1 ] || note "no GPU: the cuda tests only said so and passed"
note "cuda tests: $TESTS"
echo "$TESTS" > "$WORK/logs/tests.status"

# ---------------------------------------------------------------------------------------
step "models"
for m in "${MODELS[@]}"; do
  case "$m" in
    tv_*) ;;
    *) "$BUILD/taso-models" "$m" -o "$WORK/models/$m.onnx" > "$WORK/logs/$m.models.log" 2>&1 ||
         echo "taso-models failed: $(tail -1 "$WORK/logs/$m.models.log")" > "$WORK/logs/$m.status" ;;
  esac
done
if [ -n "$EXPORT_PID" ]; then
  wait "$EXPORT_PID"
  cat "$WORK/logs/export.log" | grep -E '^   ' || tail -3 "$WORK/logs/export.log" | sed 's/^/   | /'
fi
for m in "${MODELS[@]}"; do
  [ -f "$WORK/logs/$m.status" ] && continue
  [ -f "$WORK/models/$m.onnx" ] && { note "$m: $(du -m "$WORK/models/$m.onnx" | cut -f1) MB"; continue; }
  if [ "$TORCH" = 0 ]; then echo "skipped: torch not importable" > "$WORK/logs/$m.status"
  else echo "export failed (logs/export.log)" > "$WORK/logs/$m.status"; fi
done

cat > "$WORK/table.py" <<'EOF'
# The table: one row per model from the logs (taso-opt's report and log, taso-run's runs).
import json, os, re, statistics, sys
work, target, models = sys.argv[1], sys.argv[2], sys.argv[3:]
logs = os.path.join(work, "logs")
def read(name):
    try:
        with open(os.path.join(logs, name)) as f: return f.read()
    except OSError: return ""
def in_turn(text):  # (this model's ms, the other's ms, outputs' difference, agreement) of taso-run --against
    t = re.search(r"in turn: this model ([0-9.]+) ms, the other ([0-9.]+) ms", text)
    o = re.search(r"outputs against the other model's: max \|difference\| (\S+) \((\w+)", text)
    return (float(t[1]) if t else None), (float(t[2]) if t else None), ((float(o[1]), o[2]) if o else None)
def numel(shape):
    n = 1
    for d in re.findall(r"\d+", shape): n *= int(d)
    return n
def fmt(x, f="%.3f"): return "-" if x is None else f % x
eager = {}
if read("eager.json"): eager = json.loads(read("eager.json"))
print(f"| model | opt s | kept | est in -> out ms | input ms | output ms | speedup | per round | est ratio | est err in / out | outputs A vs B | B vs reference | e2e diff | eager ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
notes = []
for m in models:
    status = read(f"{m}.status").strip()
    if not status: status = "not reached (the run stopped before it)"
    if status != "ok":
        print(f"| {m} | {status} |" + " |" * 12)
        continue
    rep = {}
    try: rep = json.loads(read(f"{m}.json"))
    except ValueError: pass
    opt_s = read(f"{m}.opt.seconds").strip()
    a, b, ratios = [], [], []
    same_ab = None
    for r in range(1, 100):
        text = read(f"{m}.turn.{r}.log")
        if not text: break
        this, other, outs = in_turn(text)
        ma, mb = (this, other) if r % 2 == 1 else (other, this)  # odd rounds: the input is "this model"
        if ma: a.append(ma)
        if mb: b.append(mb)
        if ma and mb: ratios.append(ma / mb)
        if outs and (same_ab is None or outs[1] != "same"): same_ab = outs
    ref_b = re.search(r"against the reference executor: max \|difference\| of outputs (\S+) \((\w+)", read(f"{m}.check.log"))
    ain = statistics.median(a) if a else None
    bout = statistics.median(b) if b else None
    speed = statistics.median(ratios) if ratios else None
    per_round = ", ".join("%.3f" % x for x in ratios) or "-"
    cb, ca = rep.get("cost_before_ms"), rep.get("cost_after_ms")
    est = f"{cb:.2f} -> {ca:.2f}" if cb and ca else "-"
    est_ratio = f"{cb / ca:.3f}x" if cb and ca else "-"
    err = "-"
    if cb and ca and ain and bout: err = f"{100 * (cb / ain - 1):+.0f}% / {100 * (ca / bout - 1):+.0f}%"
    sc = rep.get("speed_check") or {}
    kept = f"{sc['rewrites_kept']}/{sc['rewrites']}" if "rewrites" in sc else "-"
    if sc.get("kept_input"): kept += " (input)"
    # A and B on the same random inputs (taso-run --against): their outputs alike?
    same = "-" if not same_ab else (("same" if same_ab[1] == "same" else "DIFFERENT") + f" ({same_ab[0]:.1e})")
    ref = (fmt(float(ref_b[1]), "%.1e") + ("" if ref_b[2] == "same" else " DIFFERENT")) if ref_b else "-"
    e2e = (rep.get("end_to_end") or {}).get("max_abs_difference")
    eg = eager.get(m, {}).get("ms")
    print(f"| {m} | {opt_s or '-'} | {kept} | {est} | {fmt(ain)} | {fmt(bout)} | {fmt(speed, '%.3fx')} | {per_round} | "
          f"{est_ratio} | {err} | {same} | {ref} | {fmt(e2e, '%.1e')} | {fmt(eg)} |")
print()
print(f"Target {target}. input/output ms: medians over the rounds of taso-run IN --executor {target} --time N "
      "--against OUT, one process per round timing both in turn (4 executor pairs made in both orders, geometric "
      "means of their medians), which model is 'this' alternating; speedup: the median of the rounds' input/output "
      "ratios (per round: each round's); est: taso-opt's cost_before_ms -> cost_after_ms; est err: estimate over "
      "measured, less 1; kept: the speed check's rewrites kept / applied; outputs A vs B: the largest difference of "
      "their outputs on the same random inputs (taso-run --against); B vs reference: the output against the reference executor (taso-run --check); e2e diff: "
      "taso-opt's end-to-end check; eager ms: PyTorch eager, fp32, TF32 off, cudnn.benchmark, batch 1 (median of rounds).")
for k in ("device", "torch"):
    if k in eager: print(f"PyTorch: {eager[k]}")
print(f"cuda tests: {read('tests.status').strip() or '-'}")
EOF

# ---------------------------------------------------------------------------------------
EXEC=$TARGET
if [ "$TARGET" = cuda ] && [ "$GPU" = 0 ]; then
  step "optimize and time: skipped (no GPU: taso-opt --target cuda and taso-run --executor cuda need one)"
  for m in "${MODELS[@]}"; do [ -f "$WORK/logs/$m.status" ] || echo "no GPU" > "$WORK/logs/$m.status"; done
else
  [ "$TORCH" = 1 ] && [ ${#TV[@]} -gt 0 ] || EAGER_RESERVE=0
  for m in "${MODELS[@]}"; do
    [ -f "$WORK/logs/$m.status" ] && { step "$m: $(cat "$WORK/logs/$m.status")"; continue; }
    if [ "$(left)" -lt $((MODEL_MIN + EAGER_RESERVE)) ]; then
      echo "skipped: time budget (GPU_CHECK_BUDGET_S=$BUDGET)" > "$WORK/logs/$m.status"
      step "$m: skipped: the time budget is spent (GPU_CHECK_BUDGET_S=$BUDGET)"
      continue
    fi
    step "$m: taso-opt --target $TARGET ${OPT_FLAGS[*]}"
    in=$WORK/models/$m.onnx out=$WORK/models/$m.opt.onnx
    limit=$(( $(left) - EAGER_RESERVE + 60 ))   # past the budget by a minute at most
    t=$(date +%s.%N)
    timeout "$limit" "$BUILD/taso-opt" "$in" -o "$out" --target "$TARGET" --report "$WORK/logs/$m.json" \
      --progress_log "${OPT_FLAGS[@]}" > "$WORK/logs/$m.opt.log" 2>&1
    rc=$?
    awk -v a="$t" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }' > "$WORK/logs/$m.opt.seconds"
    if [ $rc -ne 0 ]; then
      if [ $rc = 124 ]; then echo "taso-opt stopped after $limit s (time budget)" > "$WORK/logs/$m.status"
      else echo "taso-opt failed: $(tail -1 "$WORK/logs/$m.opt.log" | cut -c1-150)" > "$WORK/logs/$m.status"; fi
      note "$(cat "$WORK/logs/$m.status")"
      continue
    fi
    grep -E '^(estimated cost|search \(|end-to-end:|timed in|wrote)|^  (not measurably|kept|dropped)|REJECTED' \
      "$WORK/logs/$m.opt.log" | head -8 | cut -c1-170 | sed 's/^/   /'
    note "taso-opt: $(cat "$WORK/logs/$m.opt.seconds") s"
    # Input and output timed in turn in one process per round: in separate processes the
    # same ResNet-50 graph timed 3.16 to 4.51 ms on an H200 (cuDNN's algorithms are found
    # per process), more than most rewrites gain.
    for r in $(seq 1 "$ROUNDS"); do
      this=$in other=$out order="A B"
      [ $((r % 2)) = 0 ] && this=$out other=$in order="B A"
      timeout 120 "$BUILD/taso-run" "$this" --executor "$EXEC" --time "$RUNS" --against "$other" \
        > "$WORK/logs/$m.turn.$r.log" 2>&1 || note "taso-run --against, round $r, failed: $(tail -1 "$WORK/logs/$m.turn.$r.log" | cut -c1-150)"
      note "round $r ($order): $(grep -o 'this model .*' "$WORK/logs/$m.turn.$r.log" | cut -d';' -f1)"
    done
    # The output against the reference executor, once (about 3 s of CPU for the largest
    # models); the input's kernels are checked by the cuda tests and by taso-opt's own
    # end-to-end check, which ran the output against it on the cuda executor.
    timeout 90 "$BUILD/taso-run" "$out" --executor "$EXEC" --check > "$WORK/logs/$m.check.log" 2>&1 ||
      note "taso-run --check failed: $(tail -1 "$WORK/logs/$m.check.log" | cut -c1-150)"
    # Where a run's time goes, operator by operator, beside the cost model's prices: what
    # an estimate that misses the measured time misses (in raw.tar.gz).
    line=""
    for g in A B; do
      f=$in; [ "$g" = B ] && f=$out
      timeout 60 "$BUILD/taso-run" "$f" --executor "$EXEC" --profile 20 > "$WORK/logs/$m.$g.profile.log" 2>&1 ||
        note "taso-run --profile $g failed: $(tail -1 "$WORK/logs/$m.$g.profile.log" | cut -c1-150)"
      line+="$g $(grep -o '[0-9.]* ms in all' "$WORK/logs/$m.$g.profile.log" | awk '{print $1}' | paste -sd/) ms  "
    done
    note "profile (steps timed / priced): $line"
    echo "ok" > "$WORK/logs/$m.status"
    finish   # the table so far, in case the run is stopped
  done
fi

# ---------------------------------------------------------------------------------------
EAGER=()
for m in "${MODELS[@]}"; do case "$m" in tv_resnext50|tv_resnet50|tv_inception_v3|tv_transformer_layer_17) EAGER+=("$m") ;; esac; done
if [ ${#EAGER[@]} -eq 0 ]; then
  :
elif [ "$TORCH" = 0 ]; then
  step "PyTorch eager: skipped (torch not importable by $PY)"
elif ! env LD_LIBRARY_PATH="$ORIG_LD" "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  step "PyTorch eager: skipped (no GPU: torch.cuda.is_available() is false)"
else
  step "PyTorch eager (fp32, TF32 off, cudnn.benchmark, batch 1): ${EAGER[*]}"
  cat > "$WORK/eager.py" <<'EOF'
import json, os, statistics, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "python"))
import torch
import export_torch_models as e
rounds, runs, out = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
torch.set_float32_matmul_precision("highest")
dev = torch.device("cuda")
result = {"device": f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}"}
for m in sys.argv[5:]:
    torch.manual_seed(0)
    model, x = e.MODELS[m[3:]][0]()
    model = model.eval().to(dev)
    x = x.to(dev)
    with torch.no_grad():
        for _ in range(20): model(x)  # cudnn.benchmark picks its algorithms here
        torch.cuda.synchronize()
        medians = []
        for _ in range(rounds):
            times = []
            for _ in range(runs):
                t = time.perf_counter(); model(x); torch.cuda.synchronize(); times.append(time.perf_counter() - t)
            medians.append(1e3 * statistics.median(times))
    result[m] = {"ms": statistics.median(medians), "rounds": medians}
    print(f"   {m}: {statistics.median(medians):.3f} ms (rounds: {', '.join('%.3f' % t for t in medians)})", flush=True)
    del model
    torch.cuda.empty_cache()
with open(out, "w") as f: json.dump(result, f)
print("   " + result["device"])
EOF
  env LD_LIBRARY_PATH="$ORIG_LD" timeout 120 "$PY" "$WORK/eager.py" "$ROOT" "$ROUNDS" "$RUNS" "$WORK/logs/eager.json" "${EAGER[@]}" \
    2>&1 | tee "$WORK/logs/eager.log" | grep -E '^   ' || note "PyTorch eager failed: $(tail -2 "$WORK/logs/eager.log")"
fi

# ---------------------------------------------------------------------------------------
step "table ($RESULTS/gpu_check.md)"
finish
cat "$RESULTS/gpu_check.md"
echo
echo "gpu_check: done in $(el) s; $RESULTS: gpu_check.md, gpu_check.log, raw.tar.gz"
