#!/usr/bin/env bash
# --sync-check waits for the device after every layer (issue 5). It changes when errors
# are noticed, never what is computed: on the CPU (where every op is synchronous) a run
# with it ends exactly where a run without it does. Pinning a GPU error to its layer is
# tests/gpu/test_sync_check.c.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"
make_dataset "$work/data" 300 100

small=(train models/lenet.model --data "idx:$work/data" --device cpu --epochs 1 --batch 50)
run "$TRAINER" "${small[@]}"
expect_rc 0 "lenet trains without --sync-check"
plain=$(last_epoch_result)
run "$TRAINER" "${small[@]}" --sync-check
expect_rc 0 "lenet trains with --sync-check"
checked=$(last_epoch_result)
if [ -n "$plain" ] && [ "$plain" = "$checked" ]; then
    pass "--sync-check changes nothing that is computed ($checked)"
else
    fail "--sync-check changes nothing that is computed" "without: '$plain', with: '$checked'"
fi
run "$TRAINER" eval --help
expect_in out "--sync-check" "eval offers --sync-check"
finish
