#!/usr/bin/env bash
# Installs the Debian packages shoal needs to build, test and benchmark, only
# those that are missing (so it is fast when everything is there).
set -euo pipefail
pkgs=(gcc make libmimalloc-dev liblzf-dev libssl-dev openssl tcl-tls redis-server redis-tools python3-redis python3-pytest clang libclang-rt-14-dev strace liblua5.1-0-dev lua-cjson-dev lua-bitop-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
