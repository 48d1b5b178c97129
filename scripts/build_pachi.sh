#!/usr/bin/env bash
# Builds Pachi, the Monte Carlo Go engine (github.com/pasky/pachi), from its sources without
# its neural network (DCNN=0: patterns and playouts only), for the pachi player
# (plugins/gtp.py: pachi_spec) that 9x9 and 13x13 Go are measured against (docs/go.md).
#
#   scripts/build_pachi.sh [SOURCE_DIR]
#
# SOURCE_DIR: a checkout or an unpacked source archive of Pachi; without it the sources are
# cloned into ~/.local/share/hexzero/pachi. Pachi's Makefile stamps git metadata into build.h
# (from .git/HEAD and .git/index): an archive without .git is made a one-commit repository
# first. The program reads its pattern files from SOURCE_DIR at run time (built in as its
# data folder), so the folder stays where it is. Needs gcc and make; as root with apt-get they
# are installed first. The program is linked as ~/.local/bin/pachi; put that folder on
# PATH, or name the program in HEXZERO_PACHI. About 2 minutes on 2 cores.
set -euo pipefail

source_dir=${1:-$HOME/.local/share/hexzero/pachi}
if [ ! -f "$source_dir/Makefile" ]; then
    git clone --depth 1 https://github.com/pasky/pachi "$source_dir"
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq gcc make git >/dev/null
fi
if [ ! -d "$source_dir/.git" ]; then  # a source archive: the git metadata build.h is made from
    git -C "$source_dir" init -q
    git -C "$source_dir" add -A
    git -C "$source_dir" -c user.name=hexzero -c user.email=hexzero@localhost commit -qm "Pachi sources"
fi
# without the network (DCNN=0) and so without the joseki fixes that need it (JOSEKIFIX=0);
# its data (patterns, joseki) read from the sources, whatever folder it runs in
data_dir=$(cd "$source_dir" && pwd)
make -C "$source_dir" clean >/dev/null
make -C "$source_dir" DCNN=0 JOSEKIFIX=0 DATADIR="$data_dir" -j "$(nproc)" >/dev/null
program=$(cd "$source_dir" && pwd)/pachi
mkdir -p "$HOME/.local/bin"
ln -sf "$program" "$HOME/.local/bin/pachi"
echo "built $program (linked as $HOME/.local/bin/pachi)"
echo "check it: python cli.py compare pachi:1000 random --game go --size 9 --games 2"
