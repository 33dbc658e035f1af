#!/usr/bin/env bash
# One command for a newcomer: install what is missing, build, and train the default
# model (models/mlp.model) on Fashion-MNIST. Extra arguments go to `trainer train`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh build
exec ./build/trainer train models/mlp.model --data fashion-mnist "$@"
