#!/usr/bin/env bash
# Makes sure the PostgreSQL server binaries (initdb, postgres) are installed: the session
# contract tests start a throwaway cluster with them (adk_temporal/testing/postgres.py) and
# skip the PostgreSQL backend when they are missing. Installs Debian's package when absent;
# does nothing when they are already there. Call it as: bash .ci/postgres.sh
set -euo pipefail

have_server_binaries() {
    local dir
    if command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1; then
        return 0
    fi
    # Debian/Ubuntu keep them in a versioned directory that is not on PATH; RHEL too.
    for dir in /usr/lib/postgresql/*/bin /usr/pgsql-*/bin; do
        if [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ]; then
            return 0
        fi
    done
    return 1
}

if have_server_binaries; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "postgres.sh: PostgreSQL server binaries not found and apt-get is unavailable;" \
        "install PostgreSQL's server package by hand" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
echo "postgres.sh: installing PostgreSQL server binaries (apt-get install postgresql)"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq postgresql >/dev/null
if ! have_server_binaries; then
    echo "postgres.sh: apt-get installed postgresql but initdb/postgres are still missing" >&2
    exit 1
fi
