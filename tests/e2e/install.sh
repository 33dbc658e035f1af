#!/usr/bin/env bash
# Installed, the trainer lives outside its build tree: `cmake --install` into a DESTDIR,
# the tree moved elsewhere, then train a bundled model by name and run doctor from there
# (the module and the models are found from /proc/self/exe); the man page renders; the
# completions load; the .deb holds the same tree and its /usr/bin/trainer runs.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

require_fashion_mnist
build=$(dirname "$TRAINER")
if [ ! -f "$build/cmake_install.cmake" ] || [ ! -f "$build/share/trainer.1" ]; then
    echo "SKIP: $build is not a build folder with install rules (cmake_install.cmake)"
    exit 77
fi

# ---- cmake --install into a DESTDIR, then moved ----
run env DESTDIR="$work/stage" cmake --install "$build" --prefix /opt/trainer
expect_rc 0 "cmake --install into a DESTDIR"
mv "$work/stage/opt/trainer" "$work/moved"
moved=$work/moved
for f in bin/trainer share/trainer/models/mlp.model share/man/man1/trainer.1 \
    share/bash-completion/completions/trainer share/zsh/vendor-completions/_trainer; do
    if [ -e "$moved/$f" ]; then pass "installed $f"; else fail "installed $f" "missing"; fi
done
if [ -e "$build/trainer_cuda.so" ]; then  # a CUDA build
    if [ -e "$moved/lib/trainer/trainer_cuda.so" ]; then pass "installed lib/trainer/trainer_cuda.so"
    else fail "installed lib/trainer/trainer_cuda.so" "missing"; fi
fi

cd "$work" || exit 1  # away from the source tree: nothing found through models/
run "$moved/bin/trainer" --version
expect_rc 0 "the moved trainer --version"
expect_in out "models: $(realpath "$moved")/share/trainer/models" \
    "--version names the moved models folder"
if [ -e "$moved/lib/trainer/trainer_cuda.so" ]; then
    expect_in out "CUDA module: $(realpath "$moved")/bin/../lib/trainer/trainer_cuda.so" \
        "--version names the moved CUDA module"
fi
run "$moved/bin/trainer" train mlp --epochs 1 --train-limit 512 --test-limit 512
expect_rc 0 "the moved trainer trains the bundled mlp by name"
expect_match out "epoch +1/1" "it reports the epoch"
run "$moved/bin/trainer" doctor
if [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ]; then pass "the moved trainer's doctor runs (exit $rc)"
else fail "the moved trainer's doctor runs" "exit $rc"; fi

# ---- the man page and the completions ----
if command -v man >/dev/null; then
    run env MANWIDTH=80 man -l "$moved/share/man/man1/trainer.1"
    expect_rc 0 "man -l renders the man page"
    expect_in out "trainer train MODEL [options]" "the page lists train's usage"
    expect_in out "TRAINER_CUDA_MODULE" "the page names TRAINER_CUDA_MODULE"
else
    echo "skip - man is not installed: apt-get install man-db"
fi
run bash -c "source '$moved/share/bash-completion/completions/trainer' &&
    COMP_WORDS=(trainer train --epo) COMP_CWORD=2 && { _trainer; echo \"\${COMPREPLY[*]}\"; }"
expect_in out "--epochs" "bash completion completes --epo to --epochs"
run bash -c "source '$moved/share/bash-completion/completions/trainer' &&
    COMP_WORDS=(trainer train cnn) COMP_CWORD=2 && { _trainer; echo \"\${COMPREPLY[*]}\"; }"
expect_in out "cnn-bn" "bash completion completes a bundled model's name"

# ---- the .deb ----
cd "$TRAINER_SOURCE_DIR" || exit 1
if ! command -v dpkg-deb >/dev/null; then
    echo "skip - dpkg-deb is not installed: no .deb checks"
    finish
fi
run cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/pkg"
expect_rc 0 "cpack makes the .deb"
deb=$(ls "$work"/pkg/trainer_*.deb 2>/dev/null | head -1)
if [ -e "$build/trainer_cuda.so" ]; then
    cuda_deb=$(ls "$work"/pkg/trainer-cuda_*.deb 2>/dev/null | head -1)
    run dpkg-deb -c "$cuda_deb"
    expect_in out "./usr/lib/trainer/trainer_cuda.so" "trainer-cuda's .deb holds the module"
fi
run dpkg-deb -c "$deb"
expect_in out "./usr/bin/trainer" "the .deb holds /usr/bin/trainer"
expect_in out "./usr/share/trainer/models/mlp.model" "the .deb holds the bundled models"
expect_in out "./usr/share/man/man1/trainer.1" "the .deb holds the man page"
run dpkg-deb -f "$deb" Depends
expect_in out "libopenblas0-pthread" "the .deb depends on Debian's package names"
run dpkg-deb -x "$deb" "$work/root"
expect_rc 0 "dpkg-deb -x unpacks the .deb"
run "$work/root/usr/bin/trainer" --version
expect_in out "models: $(realpath "$work/root")/usr/share/trainer/models" \
    "the unpacked /usr/bin/trainer finds its models"
# Installed for real only where this is root, dpkg knows no trainer yet and nothing is at
# /usr/bin/trainer; removed again whatever happens.
if [ "$(id -u)" -eq 0 ] && ! dpkg -s trainer >/dev/null 2>&1 && [ ! -e /usr/bin/trainer ]; then
    trap 'dpkg -r trainer >/dev/null 2>&1; rm -rf "$work"' EXIT
    run dpkg -i "$deb"
    expect_rc 0 "dpkg -i installs the .deb"
    run /usr/bin/trainer --version
    expect_in out "models: /usr/share/trainer/models" "/usr/bin/trainer --version runs"
    run dpkg -r trainer
    expect_rc 0 "dpkg -r removes it again"
else
    echo "skip - dpkg -i needs root and no trainer installed; checked with dpkg-deb -x"
fi
finish
