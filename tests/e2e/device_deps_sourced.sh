#!/usr/bin/env bash
# `source scripts/device-deps.sh env` must leave the caller's shell as it was (issue 11):
# it used to switch on `set -euo pipefail` in the caller, whose shell then died at its
# next failing command. Checked on a copy of the script beside a scratch .deps/, once with
# no .deb files (it must return 1 and say so) and once with a tiny .deb (it must export
# the paths). Needs no GPU and no network.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/scripts" "$work/.deps/debs"
cp "$TRAINER_SOURCE_DIR/scripts/device-deps.sh" "$work/scripts/"

# In a shell with none of -e, -u, pipefail: source it, then fail a command on purpose.
probe='set +euo pipefail
before=$(set -o)
source scripts/device-deps.sh env
echo "sourced: $?"
[ "$before" = "$(set -o)" ] && echo "options unchanged"
false
echo "survived a failing command"
echo "prefix: ${CMAKE_PREFIX_PATH:-}"'

ran="bash -c (source device-deps.sh env, no .deb files)"
out=$(cd "$work" && bash -c "$probe" 2>"$work/err"); rc=$?; err=$(cat "$work/err")
expect_rc 0 "the caller's shell runs to its end"
expect_in out "sourced: 1" "with no .deb files it returns 1"
expect_in err "no .deb files" "and says what is missing"
expect_in out "options unchanged" "the caller's shell options are unchanged"
expect_in out "survived a failing command" "a later failing command does not end the shell"

# A .deb holding just the directories the script links and exports.
mkdir -p "$work/pkg/DEBIAN" "$work/pkg/usr/lib/x86_64-linux-gnu/openblas-pthread"
printf 'Package: trainer-fake\nVersion: 1\nArchitecture: all\nMaintainer: tests\nDescription: fake\n' \
    >"$work/pkg/DEBIAN/control"
if ! dpkg-deb --build "$work/pkg" "$work/.deps/debs/fake.deb" >/dev/null 2>&1; then
    echo "SKIP: dpkg-deb cannot build a package here"
    exit 77
fi
ran="bash -c (source device-deps.sh env, one .deb)"
out=$(cd "$work" && bash -c "$probe" 2>"$work/err"); rc=$?; err=$(cat "$work/err")
expect_rc 0 "the caller's shell runs to its end"
expect_in out "sourced: 0" "with the .deb files it returns 0"
expect_in out "prefix: $work/.deps/root/usr" "and exports the unpacked prefix"
expect_in out "options unchanged" "the caller's shell options are unchanged"
expect_in out "survived a failing command" "a later failing command does not end the shell"
finish
