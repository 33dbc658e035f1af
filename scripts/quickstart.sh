#!/usr/bin/env bash
# One command for a newcomer: install what is missing, build, train the default model
# (models/mlp.model) on Fashion-MNIST and save its weights to mlp.safetensors; the trainer
# then prints the eval and predict commands that use them. Extra arguments go to
# `trainer train` (e.g. --epochs 2).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build
./build/trainer train mlp --data fashion-mnist --save mlp.safetensors "$@"
# A few test images as PNGs, for predict to classify.
./build/trainer data export fashion-mnist png:fashion-png --limit 10 --force >/dev/null
echo "try:  ./build/trainer predict mlp --weights mlp.safetensors fashion-png/test/*/*.png"
