#!/usr/bin/env sh
# Builds and installs phasegate with cargo, then, when given a repository,
# runs it there:  ./install.sh [PATH-TO-REPOSITORY]
set -eu
# With CDPATH set, `cd` prints where it went, which would end up in `here`.
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
# Cargo.toml's rust-version.
needed=85
if ! version=$(cargo --version 2>/dev/null); then
  echo "error: cargo is not installed or not on PATH: install Rust (https://rustup.rs), then run this script again" >&2
  exit 1
fi
minor=$(echo "$version" | sed -n 's/^cargo 1\.\([0-9][0-9]*\)\..*/\1/p')
if [ -n "$minor" ] && [ "$minor" -lt "$needed" ]; then
  echo "error: phasegate needs Rust 1.$needed or newer, and this is $version: run \`rustup update\` (or install a newer Rust), then run this script again" >&2
  exit 1
fi
echo "building phasegate with cargo (the first build takes a few minutes)..."
# `cargo install` builds in a new temporary directory each time, so every
# run built everything again; the checkout's own target directory keeps
# the build, and cargo then rebuilds only what changed since (nothing, when
# the checkout is the one installed). A CARGO_TARGET_DIR of one's own is
# cargo's to use already.
if [ -n "${CARGO_TARGET_DIR-}" ]; then
  cargo install --path "$here" --locked --quiet
else
  cargo install --path "$here" --locked --quiet --target-dir "$here/target"
fi
bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin/phasegate"
# cargo's own configuration can name another place (`install.root`).
if [ ! -x "$bin" ]; then
  bin=$(command -v phasegate) || {
    echo "error: cargo installed phasegate, but not in $(dirname "$bin") nor anywhere on PATH: add the \`bin\` directory of the \`install.root\` your cargo configuration names to your PATH" >&2
    exit 1
  }
fi
echo "installed $bin ($("$bin" --version))"
# The phasegate a shell and the hooks run is the first on PATH: another,
# older one before this one would be the one that gates.
if ! found=$(command -v phasegate 2>/dev/null); then
  echo "note: add $(dirname "$bin") to your PATH to call \`phasegate\` by name"
elif [ ! "$found" -ef "$bin" ]; then
  echo "warning: the \`phasegate\` on your PATH is $found ($("$found" --version 2>/dev/null || echo 'it does not say its version')), not the one just installed, and the hooks run that one: remove it, or put $(dirname "$bin") before $(dirname "$found") in your PATH" >&2
fi
echo "next: run \`phasegate install\` in a repository to gate its commits with the git pre-commit hook"
if [ "$#" -gt 0 ]; then
  cd -- "$1"
  exec "$bin" run
fi
