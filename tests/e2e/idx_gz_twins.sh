#!/usr/bin/env bash
# An idx: folder holding both FILE and FILE.gz reads FILE. When the .gz unpacks to another
# size (one was replaced, the other not) a notice names both files and the one read; a pair
# of the same size says nothing. Only sizes are compared: the .gz's trailer, not inflated.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

if ! command -v gzip >/dev/null; then
    echo "SKIP: gzip is needed to write the .gz files"
    exit 77
fi

dir="$work/twins"
make_dataset "$dir" 20 10
for f in "$dir"/*-ubyte; do gzip -n -c "$f" >"$f.gz"; done

run "$TRAINER" check models/mlp.model --data "idx:$dir"
expect_rc 0 "check reads a folder of raw files and identical .gz twins"
expect_no_match err 'notice' "and says nothing of twins of the same size"
run "$TRAINER" data info "idx:$dir"
expect_rc 0 "so does data info"
expect_no_match err 'notice' "also without a word"

# The training images' .gz is another download: 30 images, of another value.
write_images "$work/other" 30
gzip -n -c "$work/other" >"$dir/train-images-idx3-ubyte.gz"
run "$TRAINER" check models/mlp.model --data "idx:$dir"
expect_rc 0 "a folder whose .gz differs still reads"
expect_in out "data $dir: valid, 20 train, 10 test samples" "from the raw file (20, not 30)"
expect_in err "trainer: notice: $dir holds train-images-idx3-ubyte (15696 bytes) and \
train-images-idx3-ubyte.gz, which unpacks to 23536 bytes: train-images-idx3-ubyte is read, \
the .gz is not" "a notice names both files, their sizes and the one read"
if [ "$(grep -c 'notice' <<<"$err")" -eq 1 ]; then pass "only the differing pair is named"
else fail "the notice is not for the differing pair alone"; fi
run "$TRAINER" data info "idx:$dir"
expect_in err "$dir holds train-images-idx3-ubyte (15696 bytes)" "data info says so too"

# A .gz that is no gzip at all beside the test labels.
printf 'not gzip' >"$dir/t10k-labels-idx1-ubyte.gz"
run "$TRAINER" check models/mlp.model --data "idx:$dir"
expect_rc 0 "a broken .gz beside its raw file does not stop the run"
expect_in err "and t10k-labels-idx1-ubyte.gz, which is not gzip data: t10k-labels-idx1-ubyte \
is read" "and is named as no gzip data"

finish
