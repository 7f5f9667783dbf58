#!/usr/bin/env bash
# Installs every Debian package the project needs to build, test and run.
# Idempotent and quiet: packages already present are skipped, and apt-get is
# not touched at all when nothing is missing. Works as root or through sudo.
#
# Usage: scripts/install-deps.sh [--with-torch] [--with-renderer]
#   --with-torch  also install the optional TORCH_PACKAGES below (PyTorch,
#                 about 1 GB with its dependencies), for
#                 scripts/export_torch.py (to regenerate the PyTorch example
#                 models, whose exported files are committed) and for
#                 spyre.torch of the Python package, whose tests are skipped
#                 without it. Building and the rest of the tests do not
#                 need it.
#   --with-renderer  also install RENDERER_PACKAGES (headless Chromium and
#                 Pillow), to remake the report screenshot
#                 docs/images/report.png (docs/report.md); nothing else
#                 needs them.
set -euo pipefail

with_torch=0
with_renderer=0
for arg in "$@"; do
  case "$arg" in
    --with-torch) with_torch=1 ;;
    --with-renderer) with_renderer=1 ;;
    *)
      echo "install-deps: unknown argument '$arg' (usage: scripts/install-deps.sh [--with-torch] [--with-renderer])" >&2
      exit 2
      ;;
  esac
done

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libsystemc-dev
  libyaml-cpp-dev
  libboost-dev
  libgtest-dev libgmock-dev
  libbenchmark-dev
  libcli11-dev
  nlohmann-json3-dev
  zlib1g-dev
  # The pass tests (tests/lit): lit and FileCheck.
  llvm-14-tools
  libfmt-dev
  clang libclang-rt-14-dev
  # ONNX import: the ONNX library (checker, shape inference, protobuf
  # classes), the backend node tests it is checked against, and the Python
  # package scripts/gen_onnx_models.py writes the test models with.
  libonnx-dev libprotobuf-dev protobuf-compiler
  libonnx-testdata python3-onnx
  # The Python package (python/, docs/python.md): pybind11 and the headers
  # of Debian's Python to build it, NumPy for its arrays, pytest for its
  # tests.
  pybind11-dev python3-dev python3-numpy python3-pytest
  # Sweeps through Slurm: the client commands (sbatch, squeue) and, for the
  # private single-node cluster of scripts/slurm-local.sh that the Slurm
  # sweep test starts, the daemons and munge (slurm-wlm pulls in slurmctld,
  # slurmd and slurm-client).
  slurm-wlm slurm-client munge
)

# Optional (--with-torch): Debian's PyTorch, for scripts/export_torch.py and
# spyre.torch.
TORCH_PACKAGES=(python3-torch)

if [ "$with_torch" -eq 1 ]; then
  PACKAGES+=("${TORCH_PACKAGES[@]}")
fi

# Optional (--with-renderer): a headless browser for screenshots of
# `spyre report` pages, and Pillow to shrink them.
RENDERER_PACKAGES=(chromium python3-pil)

if [ "$with_renderer" -eq 1 ]; then
  PACKAGES+=("${RENDERER_PACKAGES[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "install-deps: missing packages (${missing[*]}) and not root; rerun as root or install sudo" >&2
    exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
