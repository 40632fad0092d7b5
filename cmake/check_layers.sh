#!/bin/sh
# CTest layers.check: the boundary above comm. The layers above it (coll, dsm, array, io, sparse, shmem)
# reach other ranks only through comm's interface: puts, gets and active messages (kyoyu/comm.h), the
# channel (comm/chan.h), the strided helpers (comm/pack.h) and direct same-node access (comm/direct.h), plus the runtime's bootstrap collectives
# (runtime.h). So no MPI call, no MPI communicator or request, no other comm header and no kyi_comm field
# there: a second transport then changes comm alone. What must still stay is listed below, file by file,
# with the reason; a file on the list that no longer needs it should leave the list.
#   check_layers.sh SOURCE_DIR
src=${1:?usage: check_layers.sh SOURCE_DIR}
cd "$src" || exit 1

# path (relative to the source dir) and rule (mpi: MPI calls and types; comm: comm's private headers and
# kyi_comm), then why.
allow() {
    cat <<'LIST'
src/io/io.h mpi HDF5's MPI-IO driver takes an MPI communicator (the file's private duplicate)
src/io/file.c mpi the communicator handed to H5Pset_fapl_mpio, and the ranks' agreement on a file's status
src/io/dataset.c mpi checksums and box coverage agreed on the file's communicator, beside parallel HDF5
src/io/xfer.c mpi the ranks' agreement on a transfer's status, on the file's communicator
src/io/raw.c mpi the raw path (serial HDF5): rank 0 alone creates each dataset and sends its file offset to the ranks that write at it
LIST
}

allowed() { # file rule
    allow | awk -v f="$1" -v r="$2" '$1 == f && $2 == r { found = 1 } END { exit !found }'
}

# code lines only: comment lines (starting with /*, * or //) do not count
code() { grep -nE "$2" "$1" | grep -vE '^[0-9]+:[[:space:]]*(/\*|\*|//)'; }

mpi_re='\bMPI_[A-Z][a-z_0-9]*[[:space:]]*\(|\bMPI_(Comm|Request|Status|Message|Group|Win)\b|\bMPI_COMM_'
comm_re='#[[:space:]]*include[[:space:]]*"comm/|\bkyi_comm\.|\bkyi_comm_t\b'
comm_ok='#[[:space:]]*include[[:space:]]*"comm/(chan|pack|direct)\.h"'

bad=0
files=$(find src/coll src/dsm src/array src/io src/sparse src/shmem -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cpp' \) 2>/dev/null | sort)
for f in $files; do
    hits=$(code "$f" "$mpi_re")
    if [ -n "$hits" ] && ! allowed "$f" mpi; then
        echo "$f: MPI above comm (use comm/chan.h, or the runtime's bootstrap collectives):"
        echo "$hits" | sed 's/^/    /'
        bad=1
    fi
    hits=$(code "$f" "$comm_re" | grep -vE "$comm_ok")
    if [ -n "$hits" ] && ! allowed "$f" comm; then
        echo "$f: comm's internals above comm (only comm/chan.h, pack.h and direct.h may be included):"
        echo "$hits" | sed 's/^/    /'
        bad=1
    fi
done
# inside comm, the API files (src/comm/*.c, *.h) leave MPI to the transport folders (src/comm/mpi/, and
# src/comm/ucx/ for its bootstrap): set-up agreements go through the runtime's bootstrap collectives
for f in $(find src/comm -maxdepth 1 -type f \( -name '*.c' -o -name '*.h' \) | sort); do
    hits=$(code "$f" "$mpi_re")
    if [ -n "$hits" ]; then
        echo "$f: MPI in comm's API files (a transport's call goes to src/comm/mpi/; a set-up agreement to the runtime's bootstrap collectives):"
        echo "$hits" | sed 's/^/    /'
        bad=1
    fi
done
# an entry for a file that no longer needs it, or no longer exists, goes
for e in $(allow | awk '{ print $1 ":" $2 }'); do
    f=${e%:*} r=${e#*:}
    if [ ! -f "$f" ]; then
        echo "$f: on the allowlist but not in the tree"
        bad=1
        continue
    fi
    if [ "$r" = mpi ]; then hits=$(code "$f" "$mpi_re"); else hits=$(code "$f" "$comm_re" | grep -vE "$comm_ok"); fi
    if [ -z "$hits" ]; then
        echo "$f: allowed '$r' but needs it no more: take it off the list in cmake/check_layers.sh"
        bad=1
    fi
done
if [ "$bad" != 0 ]; then
    echo "layers.check: failed"
    exit 1
fi
echo "layers.check: $(echo "$files" | wc -l) files above comm use only its interface ($(allow | wc -l) allowed exceptions); comm's API files make no MPI call"
