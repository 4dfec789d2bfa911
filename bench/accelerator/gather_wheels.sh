#!/usr/bin/env bash
# Gathers, into bench/accelerator/wheels/ (ignored by git), the wheels that a GPU machine with
# no package registry needs beside its own JAX, CUDA and PyTorch image (Python 3.12, JAX
# 0.11.2 with its CUDA 13 plugin, NumPy, SciPy, optax, chex, matplotlib, networkx, pytest,
# scikit-build-core, nanobind, CMake and Ninja preinstalled: the case the check plans for).
# The project itself is not among them: check.sh builds it there, against that machine's
# jaxlib. Run here, where PyPI is reachable:   bash bench/accelerator/gather_wheels.sh
# Then carry the folder with the checkout (under 64 MiB in all).
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON_VERSION:-3.12}
rm -rf wheels && mkdir wheels
# Pure-Python and binary packages, each pinned to the version this project's CI installs.
PACKAGES=(
  dm-haiku==0.0.17 jmp==0.0.4                         # the networks
  gymnasium==1.4.0 farama-notifications==0.0.4        # the Gymnasium door and the peers
  mujoco==4.0.0 mujoco-core==4.0.0 mujoco-studio==4.0.0 websockets==17.4
  glfw==2.11.0 pyopengl==3.1.10                       # MuJoCo's headers and libmujoco
  mujoco-mjx==3.17.0 trimesh==5.2.0 etils==1.15.0     # the MJX twin (door "jax")
  absl-py==2.5.1 fsspec==2026.9.0 zipp==4.1.2
  tensorboardX==2.6.5 graphviz==0.21                  # reporting and drawing
  ale-py==0.12.1                                      # Atari (check.py's atari step)
)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PY" \
  --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  --platform any -d wheels "${PACKAGES[@]}"
du -sh wheels
ls wheels
