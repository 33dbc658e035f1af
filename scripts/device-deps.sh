#!/usr/bin/env bash
# Build dependencies for a lent GPU machine, which reaches no package registry and has
# CUDA, CMake and PyTorch (with cuDNN/NCCL inside its pip packages) but no OpenBLAS,
# libpng headers, Fashion-MNIST or MPI.
#
#   here:        bash scripts/device-deps.sh download   # Debian .debs into .deps/debs
#   device run:  source scripts/device-deps.sh env      # unpack to .deps/root, export paths
#                (carry `.deps/debs` with the run; nothing is installed into /)
#
# Sourced, it leaves the caller's shell options alone (no `set -e` that would end the
# caller's shell at its next failing command), defines nothing but the exported variables
# below, and returns 1 with a message when something is missing. Run, it is strict
# (`set -euo pipefail`).

_device_deps_packages=(libopenblas0-pthread libopenblas-pthread-dev libopenblas-dev
                       libgfortran5 libpng-dev libpng16-16 zlib1g-dev libcjson-dev libcjson1
                       dataset-fashion-mnist
                       # Open MPI and the libraries it loads, for `mpirun -np N trainer train`
                       # on GPU ranks (tests/gpu/mpi_*.sh): about 7 MB of .debs.
                       openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libpmix2
                       libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1
                       libucx0 libibverbs1 librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2
                       libpsm-infinipath1 libmunge2 libnuma1)

_device_deps_download() {
  local debs=$1/debs
  mkdir -p "$debs" || return 1
  (cd "$debs" && apt-get download "${_device_deps_packages[@]}") || return 1
  du -sh "$debs"
}

# _device_deps_prepend VAR DIR: DIR in front of the colon list VAR, unless already in it
# (sourcing twice must not grow LD_LIBRARY_PATH).
_device_deps_prepend() {
  case ":${!1:-}:" in
  *":$2:"*) ;;
  *) export "$1=$2${!1:+:${!1}}" ;;
  esac
}

_device_deps_env() {
  local deps=$1 root=$1/root lib site f
  if [ ! -d "$root/usr" ]; then
    if ! compgen -G "$deps/debs/*.deb" >/dev/null; then
      echo "device-deps.sh: no .deb files in $deps/debs: run 'bash scripts/device-deps.sh" \
        "download' on a machine with apt-get and carry .deps/debs" >&2
      return 1
    fi
    # Unpack into a scratch folder and rename it at the end, so that an unpacking cut
    # short is redone next time rather than taken for a complete one.
    rm -rf "$root.partial"
    for f in "$deps"/debs/*.deb; do
      dpkg -x "$f" "$root.partial" || { echo "device-deps.sh: cannot unpack $f" >&2; return 1; }
    done
    mv "$root.partial" "$root" || return 1
  fi
  lib=$root/usr/lib/x86_64-linux-gnu
  # Debian's alternatives would point libblas.so.3 at OpenBLAS; here we link it directly.
  ln -sf openblas-pthread/libopenblas.so.0 "$lib/libopenblas.so" 2>/dev/null || true
  _device_deps_prepend CMAKE_PREFIX_PATH "$root/usr"
  _device_deps_prepend LD_LIBRARY_PATH "$lib"
  _device_deps_prepend LD_LIBRARY_PATH "$lib/openblas-pthread"
  export TRAINER_FASHION_MNIST_DIR=$root/usr/share/datasets/fashion-mnist
  # Open MPI unpacked under $root, even where the machine has an MPI of its own: the
  # libraries above come first on LD_LIBRARY_PATH, so another mpirun would load its
  # plugins against our PMIx (the H200 of 2026-11-26 had an Open MPI in /usr whose
  # mca_pmix_ext3x.so then failed: "undefined symbol: PMIx_Info_create"). Debian names
  # its programs mpirun.openmpi (the plain names are alternatives its install script would
  # make); OPAL_PREFIX and PMIX_INSTALL_PREFIX relocate what Open MPI and PMIx look up
  # under /usr (their plugins, help texts, mpicc's flags, which CMake's FindMPI reads).
  if [ -x "$root/usr/bin/mpirun.openmpi" ]; then
    for f in mpirun mpiexec mpicc; do ln -sf "$f.openmpi" "$root/usr/bin/$f"; done
    export OPAL_PREFIX=$root/usr PMIX_INSTALL_PREFIX=$lib/pmix2
    _device_deps_prepend PATH "$root/usr/bin"
    # mpirun refuses to start, even for ranks on this one host, when it finds no ssh or
    # rsh to reach other hosts with; `false` stands in (nothing here starts remote ranks).
    if ! command -v ssh >/dev/null 2>&1 && ! command -v rsh >/dev/null 2>&1; then
      export OMPI_MCA_plm_rsh_agent=${OMPI_MCA_plm_rsh_agent:-false}
    fi
  fi
  # cuDNN and NCCL from PyTorch's pip packages, when the toolkit lacks them.
  site=$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' \
           2>/dev/null) || site=""
  if [ -n "$site" ] && [ -d "$site/nvidia/cudnn" ] && [ -d "$site/nvidia/nccl" ]; then
    export CUDNN_ROOT=$site/nvidia/cudnn NCCL_ROOT=$site/nvidia/nccl
    _device_deps_prepend LD_LIBRARY_PATH "$NCCL_ROOT/lib"
    _device_deps_prepend LD_LIBRARY_PATH "$CUDNN_ROOT/lib"
  fi
}

_device_deps_main() {
  local deps
  deps=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.deps || return 1
  case "${1:-}" in
  download) _device_deps_download "$deps" ;;
  env) _device_deps_env "$deps" ;;
  *)
    echo "usage: bash scripts/device-deps.sh download | source scripts/device-deps.sh env" >&2
    return 2
    ;;
  esac
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  # Sourced: no `set -e` here (it would stay set in the caller), and `return`, not `exit`.
  _device_deps_main "$@" && _device_deps_rc=0 || _device_deps_rc=$?
  unset -f _device_deps_download _device_deps_prepend _device_deps_env _device_deps_main
  unset _device_deps_packages
  # eval expands the status before the unset runs, so no variable of ours is left behind.
  eval "unset _device_deps_rc; return $_device_deps_rc"
fi
set -euo pipefail
[ "${1:-}" != env ] ||
  echo "device-deps.sh: unpacking only; source the script to export the paths" >&2
_device_deps_main "$@"
