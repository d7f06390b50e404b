#!/bin/sh
# Writes PgBouncer's auth file from the environment (the compose file's POSTGRES_PASSWORD), then
# becomes PgBouncer with deploy/pgbouncer/pgbouncer.ini.
set -eu
umask 077
printf '"%s" "%s"\n' "${PGBOUNCER_USER:-intake}" "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}" > /var/run/postgresql/pgbouncer-userlist.txt
exec pgbouncer /etc/pgbouncer/pgbouncer.ini
