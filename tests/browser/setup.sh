#!/usr/bin/env bash
# Install what the headless-Chromium report test needs: Node.js (Debian's nodejs + npm when no
# node is on PATH) and playwright-core pinned by package-lock.json (npm ci; it never downloads a
# browser: the test drives Debian's /usr/bin/chromium, installed through .ci/deps). Called by
# .ci/test; safe to re-run (skips npm ci when node_modules matches the lock file).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "gensweep: installing Node.js for the browser test (nodejs npm)" >&2
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
want=$(node -p "require('./package-lock.json').packages['node_modules/playwright-core'].version")
have=$(node -p "require('./node_modules/playwright-core/package.json').version" 2>/dev/null || true)
if [ "$want" != "$have" ]; then
    npm ci --no-audit --no-fund --loglevel=error
fi
