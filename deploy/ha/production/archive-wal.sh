#!/bin/sh
# PostgreSQL's archive_command on every node (deploy/ha/production/nodeN/patroni.yml): copies
# one finished WAL segment (or timeline history file) into the archive, durably, and never
# over a different file of the same name. Install as /usr/local/bin/jackpot-archive-wal.
#
# The archive must be storage that is not one of the three nodes' disks: a backup host's
# export mounted at /srv/jackpot-wal on every node (JACKPOT_WAL_ARCHIVE names another folder).
# Only the primary archives (archive_mode = on); a failed copy makes PostgreSQL try again, and
# keeps the segment until one succeeds.
set -eu
archive=${JACKPOT_WAL_ARCHIVE:-/srv/jackpot-wal}
path=$1
name=$2
if [ -f "$archive/$name" ]; then
    # Archived already (the node crashed between the copy and PostgreSQL noting it): the same
    # bytes are done; different bytes under the same name are a second cluster writing here.
    if cmp -s "$path" "$archive/$name"; then
        exit 0
    fi
    echo "jackpot-archive-wal: $archive/$name exists and differs from $path" >&2
    exit 1
fi
cp "$path" "$archive/$name.part"
sync "$archive/$name.part"
mv "$archive/$name.part" "$archive/$name"
sync "$archive"
