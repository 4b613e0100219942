#!/usr/bin/env bash
# Installs Debian's chromium for tests/integration/test_ui.py when it is missing.
# Never fails the build: without a browser that test skips and says why.
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "chromium.sh: no root or no apt-get; the Temporal UI test will skip" >&2
    exit 0
fi
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null; then
    echo "chromium.sh: installing chromium failed; the Temporal UI test will skip" >&2
fi
exit 0
