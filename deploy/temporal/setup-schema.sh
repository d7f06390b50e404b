#!/bin/sh
# Creates Temporal's two databases on PostgreSQL and brings their schemas to the server's version.
# Idempotent: run it before every start and upgrade of the server. docker-compose.yml runs it in the
# temporal-schema service (temporalio/admin-tools); the fleet test (test/topology) runs this same
# script with the sql tool of the server it builds.
#
#   POSTGRES_SEEDS, DB_PORT (5432), POSTGRES_USER, POSTGRES_PWD   the PostgreSQL server
#   SQL_TOOL (temporal-sql-tool), SCHEMA_DIR (/etc/temporal/schema) the admin tools' layout
set -eu
: "${POSTGRES_SEEDS:?set POSTGRES_SEEDS (the PostgreSQL host)}"
: "${POSTGRES_USER:?set POSTGRES_USER}"
: "${POSTGRES_PWD:?set POSTGRES_PWD}"
SQL_TOOL=${SQL_TOOL:-temporal-sql-tool}
SCHEMA_DIR=${SCHEMA_DIR:-/etc/temporal/schema}
# The password by environment, not on a command line that `ps` shows.
SQL_PASSWORD=$POSTGRES_PWD
export SQL_PASSWORD

sql() {
  "$SQL_TOOL" --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "${DB_PORT:-5432}" -u "$POSTGRES_USER" "$@"
}

# A step whose work is already done (a second run, an upgrade) says so; any other failure stops.
once() {
  if ! out=$(sql "$@" 2>&1); then
    case "$out" in
      *"already exists"*) echo "$*: already done" ;;
      *) echo "$out" >&2; return 1 ;;
    esac
  fi
}

for pair in temporal:temporal temporal_visibility:visibility; do
  db=${pair%%:*}
  dir=${pair#*:}
  once --db "$db" create-database
  once --db "$db" setup-schema -v 0.0
  sql --db "$db" update-schema -d "$SCHEMA_DIR/postgresql/v12/$dir/versioned"
done
echo "Temporal schemas are up to date"
