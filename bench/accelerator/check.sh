#!/usr/bin/env bash
# The GPU check (bench/accelerator/README.md): installs the carried wheels and builds this
# checkout against the machine's own JAX, then runs check.py, which writes check.json and a log
# per step into OUT (default: accelerator-out/). Arguments after the first go to check.py.
#
#   bash bench/accelerator/check.sh "$OUT" --budget 420
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:-accelerator-out}
shift || true
mkdir -p "$OUT"
PY=${PYTHON:-python3}
start=$(date +%s)
{
  echo "== install ($(date -u +%FT%TZ))"
  if ls bench/accelerator/wheels/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
      bench/accelerator/wheels/*.whl || exit 1
  fi
  # The project's C++ built here, against this machine's jaxlib (its XLA FFI headers).
  CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$PY" -m pip install -q --no-index --no-deps \
    --no-build-isolation -e . || exit 1
} >"$OUT/install.log" 2>&1
status=$?
echo "install: rc $status, $(( $(date +%s) - start )) s" | tee -a "$OUT/install.log"
if [ "$status" -ne 0 ]; then tail -40 "$OUT/install.log"; exit "$status"; fi
exec "$PY" bench/accelerator/check.py --out "$OUT" --install-seconds $(( $(date +%s) - start )) "$@"
