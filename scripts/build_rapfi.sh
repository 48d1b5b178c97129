#!/usr/bin/env bash
# Builds Rapfi, an open-source Gomocup brain (github.com/dhbloo/rapfi, GPL-3; among the
# strongest of the Gomocup tables), from its sources, for the rapfi:NODES player
# (plugins/rapfi.py): the yardstick and a teacher of 15x15 Gomoku (docs/gomoku.md). It
# plays with its classical evaluator, which is built into the program: no network file.
#
#   scripts/build_rapfi.sh [SOURCE_DIR]
#
# SOURCE_DIR: a checkout of the rapfi repository (its Rapfi/ folder is built; the
# submodules are not needed); without it the sources are cloned into
# ~/.local/share/hexzero/rapfi. Needs a C++17 compiler and CMake; as root with apt-get
# they are installed first. The program is linked as ~/.local/bin/pbrain-rapfi; put that
# folder on PATH, or name the program in HEXZERO_RAPFI. About 2 minutes on 2 cores.
set -euo pipefail

source_dir=${1:-$HOME/.local/share/hexzero/rapfi}
if [ ! -f "$source_dir/Rapfi/CMakeLists.txt" ]; then
    git clone --depth 1 https://github.com/dhbloo/rapfi "$source_dir"
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq g++ cmake >/dev/null
fi
# mend the race of a command sent as a move arrives (scripts/patch_sources.py says how)
python3 "$(dirname "$0")/patch_sources.py" rapfi "$source_dir"
# the Gomocup brain alone (NO_COMMAND_MODULES: no dataset, tuning or self-play tools)
cmake -S "$source_dir/Rapfi" -B "$source_dir/Rapfi/build" -DCMAKE_BUILD_TYPE=Release -DNO_COMMAND_MODULES=ON >/dev/null
cmake --build "$source_dir/Rapfi/build" -j "$(nproc)"
program=$(cd "$source_dir/Rapfi/build" && pwd)/pbrain-rapfi
mkdir -p "$HOME/.local/bin"
ln -sf "$program" "$HOME/.local/bin/pbrain-rapfi"
echo "built $program (linked as $HOME/.local/bin/pbrain-rapfi)"
echo "check it: python cli.py compare rapfi:100 random --game gomoku --size 15 --games 2"
