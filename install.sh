#!/usr/bin/env sh
# Builds and installs phasegate with cargo, then, when given a repository,
# runs it there:  ./install.sh [PATH-TO-REPOSITORY]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
echo "building phasegate with cargo (the first build takes a few minutes)..."
cargo install --path "$here" --locked --quiet
bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin/phasegate"
echo "installed $bin ($("$bin" --version))"
case ":$PATH:" in
  *":$(dirname "$bin"):"*) ;;
  *) echo "note: add $(dirname "$bin") to your PATH to call \`phasegate\` by name" ;;
esac
if [ "$#" -gt 0 ]; then
  cd "$1"
  exec "$bin" run
fi
