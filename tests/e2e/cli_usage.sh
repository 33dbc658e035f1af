#!/usr/bin/env bash
# The command line itself: usage, help, version, and how bad usage is refused (exit 2,
# with a did-you-mean for near misses), before any model or data is touched.
source "$(dirname "${BASH_SOURCE[0]}")/common.bash"

run "$TRAINER"
expect_rc 2 "no arguments is a usage error"
expect_in err "usage: trainer COMMAND" "no arguments prints the usage on stderr"

for help in --help -h help; do
    run "$TRAINER" "$help"
    expect_rc 0 "trainer $help succeeds"
    for command in train eval check; do
        expect_match out "^  $command " "trainer $help lists '$command'"
    done
done

train_options="--data --epochs --batch --lr --seed --save --train-limit --test-limit --device
    --memory-limit --memory-mode --threads --precision --no-tf32 --help"
eval_options="--weights --data --batch --test-limit --device --memory-limit --memory-mode
    --threads --precision --no-tf32 --help"
check_options="--batch --precision --help"
for command in train eval check; do
    options_var="${command}_options"
    for help in --help -h; do
        run "$TRAINER" "$command" "$help"
        expect_rc 0 "trainer $command $help succeeds"
        expect_in out "usage: trainer $command" "trainer $command $help shows its usage"
    done
    missing=""
    for option in ${!options_var}; do
        grep -qE -- "^  (-h, )?$option( |$)" <<<"$out" || missing+=" $option"
    done
    if [ -z "$missing" ]; then pass "trainer $command --help lists all its options"
    else fail "trainer $command --help lists all its options" "missing:$missing"; fi
    # Help wins over everything else on the line, even a missing model file.
    run "$TRAINER" "$command" no-such.model --help
    expect_rc 0 "trainer $command no-such.model --help still shows help"
done

version=$(sed -n 's/^project(trainer VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
run "$TRAINER" --version
expect_rc 0 "trainer --version succeeds"
expect_match out "^trainer ${version//./\\.}$" "trainer --version prints 'trainer $version'"
expect_match out '^MPI: (Open MPI v[0-9]|not built in$)' "--version says whether MPI is built in"

run "$TRAINER" trian
expect_error 2 "unknown command 'trian'; did you mean 'train'?" "a misspelt command gets a suggestion"
run "$TRAINER" frobnicate
expect_error 2 "unknown command 'frobnicate'" "an unknown command is refused"

run "$TRAINER" train models/mlp.model --epoch 3
expect_error 2 "unknown option '--epoch' for train; did you mean '--epochs'?" \
    "a misspelt option gets a suggestion"
# An option cut short is suggested whole when it begins that option alone (--clip was five
# edits from --clip-norm, and got nothing); one that begins two options names neither.
run "$TRAINER" train models/mlp.model --clip 1
expect_error 2 "unknown option '--clip' for train; did you mean '--clip-norm'?" \
    "an option cut short gets a suggestion"
run "$TRAINER" train models/mlp.model --clip=1
expect_error 2 "did you mean '--clip-norm'?" "an option cut short before '=' gets one too"
run "$TRAINER" train models/mlp.model --sync
expect_error 2 "unknown option '--sync' for train" "a start of two options is refused"
expect_no_match err "did you mean" "and neither --sync-batchnorm nor --sync-check is guessed"
run "$TRAINER" train models/mlp.model --l 0.1
expect_error 2 "unknown option '--l' for train; did you mean '--lr'?" \
    "one letter past the dashes is still a typo of --lr, not the start of --logdir"
run "$TRAINER" eval models/mlp.model --wieghts w.bin
expect_error 2 "did you mean '--weights'?" "a misspelt eval option gets a suggestion"
run "$TRAINER" check models/mlp.model --epochs 3
expect_error 2 "unknown option '--epochs' for check" "an option of another command is refused"

run "$TRAINER" train models/mlp.model --epochs
expect_error 2 "option --epochs needs a value" "an option missing its value is refused"
run "$TRAINER" train models/mlp.model --epochs abc
expect_error 2 "--epochs abc" "--epochs abc is refused, quoting the value"
run "$TRAINER" train models/mlp.model --epochs=abc
expect_error 2 "--epochs abc" "--epochs=abc is refused too"
run "$TRAINER" train models/mlp.model --epochs 0
expect_error 2 "--epochs 0" "--epochs 0 is refused"
run "$TRAINER" check models/mlp.model --batch -5
expect_error 2 "--batch -5" "check --batch -5 is refused"

# A range says which ends are allowed, in words: 0 and 1 are both refused.
for split in 0 1; do
    run "$TRAINER" train models/mlp.model --val-split "$split"
    expect_error 2 "--val-split $split: expected a number more than 0 and less than 1" \
        "--val-split $split is refused with the range it takes"
done
# strtod and strtol read more than a decimal number: hexadecimal and leading spaces are refused.
for split in 0x0.2p0 " 0.1"; do
    run "$TRAINER" train models/mlp.model --val-split "$split"
    expect_error 2 "--val-split $split: expected a number" "--val-split '$split' is refused"
done
run "$TRAINER" train models/mlp.model --epochs " 2"
expect_error 2 "--epochs  2: expected a whole number" "a whole number with a leading space too"
run "$TRAINER" check models/mlp.model --on-bad-sample sikp
expect_error 2 "--on-bad-sample sikp: expected fail or skip" \
    "check refuses a mistyped --on-bad-sample without --data too (it exited 0)"
# An option taking a word besides a number names the word, and suggests it for a near miss.
run "$TRAINER" train models/mlp.model --checkpoint "$work/ck" --checkpoint-every epoc
expect_error 2 "--checkpoint-every epoc: expected a whole number from 1 to 1073741824, or epoch" \
    "--checkpoint-every epoc names 'epoch' as accepted"
expect_in err "hint: did you mean '--checkpoint-every epoch'?" "and suggests it"
run "$TRAINER" bench gemm --device cpu --sizes 99999999
expect_error 2 "--sizes 99999999: '99999999' is out of range" \
    "a size too large is out of range, not unreadable"
run "$TRAINER" bench memory --device cpu --bytes 128G
expect_error 2 "--bytes 128G: '128G' is out of range" "a copy too large is out of range"

# `--` ends the options, as in POSIX tools: what follows is a positional argument.
run "$TRAINER" check -- models/mlp.model
expect_rc 0 "check -- MODEL reads the model after --"
run "$TRAINER" check models/mlp.model -- --batch
expect_error 2 "takes one model file, got 2 arguments" "an option after -- is an argument"
run "$TRAINER" check models/mlp.model --
expect_rc 0 "a trailing -- is not taken for an argument"

# The model and the weights swapped: each reader names what it was given.
printf '\x02\x00\x00\x00\x00\x00\x00\x00{}' >"$work/w.safetensors"
run "$TRAINER" eval "$work/w.safetensors" --weights models/mlp.model --device cpu
expect_error 2 "w.safetensors:1:1: this is a safetensors file" \
    "weights given as the model are named as a safetensors file"
expect_in err "the model file (.model) comes first" "with a hint on the order"
run "$TRAINER" eval models/mlp.model --weights models/mlp.model --device cpu
expect_error 2 "models/mlp.model: not a safetensors file: it starts with text" \
    "a model file given as the weights is named as text"

# A model file past the 1 MiB limit says its size ("more than that" said none).
head -c 5242880 /dev/zero | tr '\0' '#' >"$work/big.model"
run "$TRAINER" check "$work/big.model"
expect_error 2 "big.model: model file is too large (5242880 bytes, at most 1048576 bytes)" \
    "a model file too large is refused with its size and the limit"

# An empty path (an unset shell variable: --save "$OUT") is refused up front, naming the
# option; --save "" used to train and then fail with 'renaming into place failed'.
make_random_dataset "$work/tiny-data" 64 16
tiny=(--data "idx:$work/tiny-data" --device cpu --epochs 1)
for option in --save --checkpoint --logdir --resume --init-from; do
    run "$TRAINER" train models/mlp.model "${tiny[@]}" "$option" ""
    expect_error 2 "$option was given an empty path" "train $option '' is refused"
    expect_in err "unset or empty shell variable" "... with a hint at the usual cause"
    expect_no_match out '^epoch ' "... before the first step"
done
# --help shows the help even beside an option it would refuse.
run "$TRAINER" train --save "" --help
expect_rc 0 "train --save '' --help shows the help"
expect_in out "usage: trainer train MODEL" "... the usage line"

# --lr's range is open at 0 only: any positive rate trains, however small (1e-13 was
# refused, with a message saying "more than 0").
run "$TRAINER" train models/mlp.model "${tiny[@]}" --lr 1e-13
expect_rc 0 "--lr 1e-13 trains"
run "$TRAINER" train models/mlp.model "${tiny[@]}" --lr 0
expect_error 2 "--lr 0: expected a number more than 0 and at most 100" "--lr 0 is refused"
run "$TRAINER" train models/mlp.model "${tiny[@]}" --save=
expect_error 2 "--save was given an empty path" "train --save= is refused"
run "$TRAINER" eval models/mlp.model --device cpu --weights ""
expect_error 2 "--weights was given an empty path" "eval --weights '' is refused"

# `~` after `=` is expanded from $HOME, as the shell does at a word's start: --checkpoint=~/ck
# made a folder named `~` in the current one. Run from a scratch folder so that a failure
# leaves its `~` there, not in the source tree.
mkdir -p "$work/home" "$work/cwd"
cd "$work/cwd" || exit 1
HOME="$work/home" run "$TRAINER" train "$TRAINER_SOURCE_DIR/models/mlp.model" "${tiny[@]}" \
    --save=~/w.safetensors --checkpoint=~/ck --logdir=~/lg
expect_rc 0 "train --save=~/... --checkpoint=~/... --logdir=~/..."
[ -f "$work/home/w.safetensors" ] && [ -d "$work/home/ck" ] && [ -d "$work/home/lg" ] &&
    pass "... writes into \$HOME" || fail "... writes into \$HOME" "home: $(ls "$work/home")"
[ ! -e "$work/cwd/~" ] && pass "... and makes no folder named ~" ||
    fail "... and makes no folder named ~"
HOME="$work/home" run "$TRAINER" eval "$TRAINER_SOURCE_DIR/models/mlp.model" --device cpu \
    --data "idx:$work/tiny-data" --weights="~/w.safetensors"
expect_rc 0 "eval --weights='~/w.safetensors' (quoted) reads from \$HOME"
cd "$TRAINER_SOURCE_DIR" || exit 1

run "$TRAINER" check
expect_error 2 "takes one model file" "check without a model file is a usage error"
run "$TRAINER" check models/mlp.model models/mlp.model
expect_error 2 "takes one model file" "check with two model files is a usage error"
run "$TRAINER" check no-such.model
expect_error 2 "no-such.model" "check of a missing file names it"

finish
