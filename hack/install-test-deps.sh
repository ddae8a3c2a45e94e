#!/usr/bin/env bash
# Installs what the tests need beyond Go and the tools hack/build-tools.sh
# builds: the official Kubernetes Python client, from Debian's archive
# (python3-kubernetes, for Debian's /usr/bin/python3), which TestPythonClient
# drives the API with. Does nothing when it is already there.
set -euo pipefail

if /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
  echo "python3-kubernetes: installed"
  exit 0
fi
SUDO=""
if [[ "$(id -u)" != 0 ]]; then
  SUDO=sudo
fi
start=$(date +%s)
echo "installing python3-kubernetes (Debian) ..."
${SUDO} apt-get update -qq
DEBIAN_FRONTEND=noninteractive ${SUDO} apt-get install -y -qq --no-install-recommends python3-kubernetes >/dev/null
echo "installed python3-kubernetes in $(( $(date +%s) - start ))s"
