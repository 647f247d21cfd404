#!/usr/bin/env bash
# Installs the Debian packages Strata needs (and any named as arguments), only when one is
# missing, then Arrow's Parquet reader from PyPI (scripts/install-arrow.sh). Run as root (or
# with sudo available).
set -euo pipefail
PKGS=(g++ make openmpi-bin libopenmpi-dev libhdf5-dev hdf5-tools libcxxopts-dev libfmt-dev
      doctest-dev libopenblas-dev libdnnl-dev zlib1g-dev liburing-dev librocksdb-dev python3 python3-torch
      python3-numpy python3-matplotlib python3-h5py python3-pip "$@")  # arguments: extra packages (make fuzz: clang)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "make deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
"$(dirname "$0")/install-arrow.sh"
