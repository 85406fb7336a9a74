#!/bin/sh
# Patroni's post_bootstrap script: run once, on the node that bootstraps the cluster, with a
# superuser's connection string as $1. It makes the journal's role and its own database
# (docs/ha.md, "Naming the journal": the database must be the journal's alone); the journal
# gives the database its tables at the controller's first start.
set -eu
psql "$1" --no-psqlrc -v ON_ERROR_STOP=1 --quiet <<'SQL'
CREATE ROLE jackpotd LOGIN;
CREATE DATABASE jackpot OWNER jackpotd;
SQL
