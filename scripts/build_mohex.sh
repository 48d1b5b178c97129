#!/usr/bin/env bash
# Builds MoHex 2.0, the Hex engine of the benzene project, from its sources, for the
# mohex:SIMULATIONS player (plugins/mohex.py): the yardstick and the teacher of 9x9 and
# 11x11 Hex (docs/hex.md).
#
#   scripts/build_mohex.sh [SOURCE_DIR]
#
# SOURCE_DIR: a checkout of the CMake port of benzene (github.com/cgao3/benzene-vanilla-cmake);
# without it the sources are cloned into ~/.local/share/hexzero/benzene. The program reads
# its pattern files from SOURCE_DIR/share at run time, so the checkout stays where it is.
# Needs a C++ compiler, CMake, Boost (thread, system, filesystem, program_options,
# date_time) and Berkeley DB; as root with apt-get they are installed first. The program is
# linked as ~/.local/bin/mohex; put that folder on PATH, or name the program in
# HEXZERO_MOHEX. About 5 minutes on 2 cores.
set -euo pipefail

source_dir=${1:-$HOME/.local/share/hexzero/benzene}
if [ ! -f "$source_dir/CMakeLists.txt" ]; then
    git clone --depth 1 https://github.com/cgao3/benzene-vanilla-cmake "$source_dir"
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq g++ cmake libboost-thread-dev libboost-system-dev libboost-filesystem-dev \
        libboost-program-options-dev libboost-date-time-dev libdb-dev >/dev/null
fi
# two crashes in positions the filled-in cells decide, mended first (see the script)
python3 "$(dirname "$0")/patch_sources.py" benzene "$source_dir"
cmake -S "$source_dir" -B "$source_dir/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$source_dir/build" --target mohex -j "$(nproc)"
program=$(cd "$source_dir/build/src/mohex" && pwd)/mohex
mkdir -p "$HOME/.local/bin"
ln -sf "$program" "$HOME/.local/bin/mohex"
echo "built $program (linked as $HOME/.local/bin/mohex)"
echo "check it: python cli.py compare mohex:1000 random --game hex --size 9 --games 2"
