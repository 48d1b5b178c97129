#!/usr/bin/env bash
# What travels to a lent device machine kept under its limit (64 MiB: the tracked files and
# the untracked ones git does not ignore). models/ alone is over it, and a burst needs one
# network at most, so for the calls models/ is taken out of the index and ignored, the
# files named kept in; afterwards the index and the ignore list are as they were. The
# files stay on disk throughout.
#
#     bash scripts/device_slim.sh size                 # the bytes that would travel now
#     bash scripts/device_slim.sh on [FILE...]         # models/ out, but FILE... (under models/)
#     bash scripts/device_slim.sh off                  # back as it was
#
# `size` and `on` exit 1 where what travels is still over the limit. `on` refuses (exit 2)
# where models/ has changes staged (they would be lost by `off`) or is out already. Run `off`
# before committing anything: while `on`, git status shows models/ as deleted.
set -u
LIMIT=$((64 * 1024 * 1024))
MARK="# device_slim.sh: models/ out of what travels (remove with: bash scripts/device_slim.sh off)"
cd "$(dirname "$0")/.." || exit 2
exclude=$(git rev-parse --git-path info/exclude) || exit 2

travelling() {  # the bytes of the tracked files on disk, the untracked ones not ignored and shared/
    { git ls-files -z; git ls-files -z --others --exclude-standard; } | while IFS= read -r -d '' path; do
        [ -f "$path" ] && [ ! -L "$path" ] && printf '%s\0' "$path"
    done | du -cb --files0-from=- 2>/dev/null | tail -n 1 | cut -f 1
}

size() {  # says what travels; false where it is over the limit
    local bytes shared=0 total
    bytes=$(travelling)
    [ -d shared ] && shared=$(du -sb shared | cut -f 1)
    total=$((${bytes:-0} + shared))
    if [ "$total" -gt "$LIMIT" ]; then
        echo "$total bytes travel ($((total / 1048576)) MiB), OVER the device tool's 64 MiB"
        return 1
    fi
    echo "$total bytes travel ($((total / 1048576)) MiB), under the device tool's 64 MiB"
}

case ${1:-} in
    size)
        size
        ;;
    on)
        shift
        if grep -qxF "$MARK" "$exclude" 2>/dev/null; then
            echo "device_slim.sh: models/ is out already (bash scripts/device_slim.sh off puts it back)" >&2
            exit 2
        fi
        if ! git diff --cached --quiet -- models; then
            echo "device_slim.sh: models/ has changes staged; commit or unstage them first" >&2
            exit 2
        fi
        for keep in "$@"; do
            case $keep in
                models/*)
                    if [ -z "$(git ls-files -- "$keep")" ]; then
                        echo "device_slim.sh: $keep: not a tracked file under models/" >&2
                        exit 2
                    fi ;;
                *) echo "device_slim.sh: $keep: only files under models/ are kept in" >&2; exit 2 ;;
            esac
        done
        git rm -r -q --cached -- models || exit 2
        [ $# -gt 0 ] && { git reset -q -- "$@" || exit 2; }
        mkdir -p "$(dirname "$exclude")"
        printf '%s\n/models/\n' "$MARK" >> "$exclude"
        size
        ;;
    off)
        git reset -q -- models || exit 2
        if [ -f "$exclude" ]; then
            awk -v mark="$MARK" '$0 == mark { skip = 1; next }
                                 skip && $0 == "/models/" { skip = 0; next } { skip = 0; print }' \
                "$exclude" > "$exclude.tmp" && mv "$exclude.tmp" "$exclude"
        fi
        size
        true
        ;;
    *)
        echo "usage: bash scripts/device_slim.sh size | on [FILE...] | off" >&2
        exit 2
        ;;
esac
