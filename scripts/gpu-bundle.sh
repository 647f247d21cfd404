#!/usr/bin/env bash
# make gpu-bundle: downloads, on a networked Debian 12 machine, the .deb files that a bare
# GPU machine (CUDA, NCCL and PyTorch, but no MPI, HDF5, OpenBLAS, oneDNN or network) needs
# to build and run Strata, into $GPU_BUNDLE (deps/gpu-bundle, git-ignored). No package is
# installed here: scripts/gpu-check.sh unpacks the files into a private prefix there.
# The list: the runtime libraries the binaries load beyond the C and C++ runtimes and CUDA,
# the headers and link names the build needs, and Open MPI's launcher.
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${GPU_BUNDLE:-deps/gpu-bundle}

RUNTIME=(libopenmpi3 libpmix2 libhwloc15 libevent-core-2.1-7 libevent-pthreads-2.1-7 libudev1
         libhdf5-103-1 libaec0 libsz2 libcurl4 libbrotli1 libcom-err2 libgssapi-krb5-2 libk5crypto3
         libkeyutils1 libkrb5-3 libkrb5support0 libldap-2.5-0 libsasl2-2 libnghttp2-14 libpsl5
         librtmp1 libssh2-1 libssl3 libgnutls30 libhogweed6 libnettle8 libgmp10 libidn2-0
         libunistring2 libp11-kit0 libtasn1-6 libffi8 libzstd1 zlib1g
         libopenblas0-pthread libgfortran5 libquadmath0 libgomp1 libdnnl2 ocl-icd-libopencl1
         libfmt9 liburing2)
BUILD_ONLY=(libopenmpi-dev openmpi-bin openmpi-common libhdf5-dev libcxxopts-dev libfmt-dev
            doctest-dev libopenblas-dev libopenblas-pthread-dev libdnnl-dev liburing-dev zlib1g-dev)

command -v apt-get >/dev/null || { echo "gpu-bundle: needs apt-get (a Debian 12 machine)" >&2; exit 1; }
mkdir -p "$BUNDLE"
rm -f "$BUNDLE"/*.deb
# apt-get download writes into the current directory; _apt may not write into $BUNDLE.
(cd "$BUNDLE" && apt-get download -qq "${RUNTIME[@]}" "${BUILD_ONLY[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
count=$(ls "$BUNDLE"/*.deb | wc -l)
want=$(( ${#RUNTIME[@]} + ${#BUILD_ONLY[@]} ))
[ "$count" -eq "$want" ] || { echo "gpu-bundle: got $count of $want packages in $BUNDLE" >&2; exit 1; }
echo "gpu-bundle: $count packages, $(du -sh "$BUNDLE" | cut -f1), in $BUNDLE"
