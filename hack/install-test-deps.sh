#!/usr/bin/env bash
# Installs what the tests need beyond Go and the tools hack/build-tools.sh
# builds, from Debian's archive: the official Kubernetes Python client
# (python3-kubernetes, for Debian's /usr/bin/python3), which TestPythonClient
# drives the API with, and the headless Chromium the console's browser tests
# run (chromium-headless-shell, with a font to render text). Installs only
# what is missing.
set -euo pipefail

missing=()
if ! /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then
  missing+=(python3-kubernetes)
else
  echo "python3-kubernetes: installed"
fi
if ! command -v chromium-headless-shell >/dev/null 2>&1; then
  missing+=(chromium-headless-shell fonts-dejavu-core)
else
  echo "chromium-headless-shell: installed ($(chromium-headless-shell --version 2>/dev/null || true))"
fi
if [[ ${#missing[@]} == 0 ]]; then
  exit 0
fi
SUDO=""
if [[ "$(id -u)" != 0 ]]; then
  SUDO=sudo
fi
start=$(date +%s)
echo "installing ${missing[*]} (Debian) ..."
${SUDO} apt-get update -qq
DEBIAN_FRONTEND=noninteractive ${SUDO} apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "installed ${missing[*]} in $(( $(date +%s) - start ))s"
