#!/usr/bin/env bash
# Installs nmpsim's build and test dependencies from Debian 12 packages.
# Skips everything already installed; runs `apt-get update` only when something is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libsystemc-dev            # SystemC 2.3.4 + TLM-2.0
  verilator                 # Verilator 5 (router RTL co-simulation)
  yosys                     # synthesis check of the router RTL (ctest rtl_synth)
  libboost-program-options-dev
  googletest libgtest-dev
  zlib1g-dev                # gzip-compressed traces (data/)
  nlohmann-json3-dev
  coinor-libcbc-dev         # MILP (HD-MoE node balance)
  libeigen3-dev             # Gaussian-process surrogate (HD-MoE link balance)
  gnuplot-nox               # PNG plots
  time                      # /usr/bin/time -v in bench/
  python3                   # bench/*.py and ctest timeline_png
  parallel                  # GNU parallel: nmpsim sweep --emit-jobs (tested for real)
  clang-format              # ctest clang_format: the code follows .clang-format
  clang libclang-rt-14-dev  # libFuzzer + ASan/UBSan runtimes for the fuzz targets (ctest label fuzz)
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
