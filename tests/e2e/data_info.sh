#!/usr/bin/env bash
# `trainer data info SPEC`: per split, the shape, samples per class, value range, mean, std.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

make_dataset "$work/tiny" 20 10
run "$TRAINER" data info "idx:$work/tiny"
expect_rc 0 "data info describes an idx:DIR"
expect_in out "train: 20 samples of 1x28x28 from $work/tiny" "the training split's shape"
expect_in out "test: 10 samples of 1x28x28" "and the test split's"
expect_match out "^  class   9 +2$" "samples per class (labels 0-9, twice each)"
# Every pixel is 0x40: 64/255 = 0.2510, std 0.
expect_in out "values 0.2510 to 0.2510, mean 0.2510, std 0.0000" "the value range, mean, std"
expect_in out "per channel: normalize mean=0.251 std=1" \
    "per channel, as a normalize statement (a constant channel keeps std 1)"

{ echo "label,x"; echo "1,2"; echo "0,4"; } >"$work/two.csv"
run "$TRAINER" data info "csv:$work/two.csv"
expect_rc 0 "data info describes a CSV (no test split)"
expect_in out "train: 2 samples of 1x1x1 from $work/two.csv (f32 features)" "its shape"
expect_in out "values 2.0000 to 4.0000, mean 3.0000, std 1.0000" "features as they are"

# The limits train takes describe the samples a run with them would see (they were ignored).
run "$TRAINER" data info "idx:$work/tiny" --limit 4 --test-limit 11
expect_rc 0 "data info takes --limit and --test-limit"
expect_in out "train: 4 samples of 1x28x28" "--limit cuts the training split"
expect_in out "test: 10 samples of 1x28x28" "--test-limit past the test split keeps it whole"
expect_in err "notice: --test-limit 11 is more than the 10 test samples: all 10 are used" \
    "... and says so"
run "$TRAINER" data info "idx:$work/tiny" --channels 3
expect_error 2 "--channels 3: idx:$work/tiny has 1 channel of its own" \
    "--channels for a source that is not png: is refused, not ignored"
run "$TRAINER" data info "idx:$work/tiny" --on-bad-sample ignore
expect_error 2 "--on-bad-sample ignore: expected fail or skip" "an unknown word is refused"

run "$TRAINER" data list "idx:$work/tiny"
expect_error 2 "trainer data takes \`info SPEC\`" "an unknown verb is refused"

# A png:DIR image of another size: no model is involved, so the message names the size most
# images have and one of them (it used to say "the model takes 28x28").
require_python3 "write the test PNGs"
python3 - "$work/sizes" <<'PY'
import os, struct, sys, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
def png(path, width, height):
    rows = b"".join(b"\x00" + bytes(width) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) +
                chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
for name in ("a", "b"):
    os.makedirs(os.path.join(sys.argv[1], name))
png(os.path.join(sys.argv[1], "a", "0.png"), 28, 28)
png(os.path.join(sys.argv[1], "b", "0.png"), 30, 30)
# The first image is empty and the second of another size: neither sets the split's size.
odd = sys.argv[1] + "-odd"
for name in ("a", "b"):
    os.makedirs(os.path.join(odd, name))
open(os.path.join(odd, "a", "0.png"), "wb").close()
png(os.path.join(odd, "a", "1.png"), 30, 30)
for path in ("a/2.png", "b/0.png", "b/1.png"):
    png(os.path.join(odd, path), 28, 28)
PY
run "$TRAINER" data info "png:$work/sizes"
expect_error 2 "$work/sizes/b/0.png: image is 30x30 pixels (WxH), but the split's images are \
28x28 (the most common size; e.g. $work/sizes/a/0.png)" \
    "data info names the split's own size (a tie: the earlier), not a model's"
expect_no_match err "model" "... and speaks of no model"

# An empty class folder last: it is a class (train counts it), shown with 0 samples.
mkdir -p "$work/sizes-odd/c"
run "$TRAINER" data info "png:$work/sizes-odd" --on-bad-sample skip
expect_match out "^  class   2 c +0$" "an empty last class folder is listed, with 0"
rmdir "$work/sizes-odd/c"
run "$TRAINER" data info "png:$work/sizes-odd" --on-bad-sample skip
expect_rc 0 "an empty first image and an odd second one are skipped, not made the split's size"
expect_in out "train: 3 samples of 1x28x28" "the three 28x28 images are kept"
expect_in out "skipped 2 unreadable samples" "and the two bad ones counted"
run "$TRAINER" data info "png:$work/sizes-odd"
expect_error 2 "$work/sizes-odd/a/0.png: " "without skip, the empty first image stops it"

run "$TRAINER" data inof fashion-mnist
expect_error 2 "unknown action 'inof'" "a mistyped action is refused"
expect_in err "did you mean 'trainer data info'?" "... with the action it was near"
run "$TRAINER" data info "csv:$work/two.csv" --channels 2
expect_error 2 "--channels 2: must be 1 or 3" "--channels 2 is refused, with a hint"

finish
