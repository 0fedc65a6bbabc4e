#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
python3 bench/gate.py target/release/phasegate
cargo bench --locked --quiet --bench handoff
cargo bench --locked --quiet --bench diagnostics
