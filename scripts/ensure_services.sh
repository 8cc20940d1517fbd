#!/usr/bin/env bash
# Make sure the PostgreSQL and Redis *binaries* exist, so tests/conftest.py can start its own
# throwaway servers on 127.0.0.1. Starts nothing itself, and never relies on a system cluster
# (the Debian package may start one on 5432; the tests ignore it). Also Debian's chromium,
# which tests/test_ui_page.py drives headless through Playwright (no browser is downloaded).
#
# Idempotent and quick when everything is there. When something is missing and we are root,
# installs the Debian packages (apt-get update once, then install). Not root: one clear line,
# non-zero exit.
set -euo pipefail

on_path() {
    # `command -v` alone may print a non-executable file it met on PATH; insist on -x.
    local p
    p=$(command -v "$1" 2>/dev/null) && [ -x "$p" ] && echo "$p"
}

find_pg_bindir() {
    # PATH first (a developer's own build wins), then Debian's versioned dirs, newest first.
    local p
    if p=$(on_path initdb) && on_path pg_ctl >/dev/null && on_path postgres >/dev/null; then
        dirname "$(readlink -f "$p")"
        return 0
    fi
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
            echo "$d"
            return 0
        fi
    done
    return 1
}

find_redis() {
    on_path redis-server && return 0
    # /usr/bin is on every sane PATH, but a stripped PATH should not trigger a reinstall.
    [ -x /usr/bin/redis-server ] && echo /usr/bin/redis-server && return 0
    return 1
}

find_chromium() {
    on_path chromium && return 0
    [ -x /usr/bin/chromium ] && echo /usr/bin/chromium && return 0
    return 1
}

pg_dir=$(find_pg_bindir || true)
redis_bin=$(find_redis || true)
chromium_bin=$(find_chromium || true)

missing=()
[ -n "$pg_dir" ] || missing+=(postgresql)
[ -n "$redis_bin" ] || missing+=(redis-server)
[ -n "$chromium_bin" ] || missing+=(chromium)

if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "ensure_services: missing ${missing[*]}; as root run" \
            "'apt-get install -y ${missing[*]}' (or run make test as root) so the storage" \
            "tests can start their servers." >&2
        exit 1
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "ensure_services: missing ${missing[*]} and no apt-get here; install them" \
            "by hand (initdb/pg_ctl/postgres and redis-server on PATH)." >&2
        exit 1
    fi
    echo "ensure_services: installing ${missing[*]} with apt-get ..."
    export DEBIAN_FRONTEND=noninteractive
    log=$(mktemp)
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
        >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        echo "ensure_services: apt-get failed installing ${missing[*]} (log above)." >&2
        rm -f "$log"
        exit 1
    fi
    rm -f "$log"
    pg_dir=$(find_pg_bindir || true)
    redis_bin=$(find_redis || true)
    chromium_bin=$(find_chromium || true)
    if [ -z "$pg_dir" ] || [ -z "$redis_bin" ] || [ -z "$chromium_bin" ]; then
        echo "ensure_services: installed packages but still cannot find" \
            "initdb/pg_ctl/postgres, redis-server or chromium." >&2
        exit 1
    fi
fi

pg_ver=$("$pg_dir/postgres" --version | sed -n "s/.*(PostgreSQL) \([^ ]*\).*/\1/p")
redis_ver=$("$redis_bin" --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')
echo "ensure_services: postgres ${pg_ver} (${pg_dir}), redis-server ${redis_ver} (${redis_bin})," \
    "chromium (${chromium_bin})"
