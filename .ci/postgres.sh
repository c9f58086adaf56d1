# PostgreSQL helpers for CI (sourced by .ci/run). Needs .ci/lib.sh.
# The machine has the Debian cluster 15/main on 127.0.0.1:5432 with trust auth for user postgres.

PG_VERSION=${PG_VERSION:-15}
PG_CLUSTER=${PG_CLUSTER:-main}
PG_HOST=${PG_HOST:-127.0.0.1}
PG_PORT=${PG_PORT:-5432}
PG_SUPERUSER=${PG_SUPERUSER:-postgres}
PG_READY_TIMEOUT=${PG_READY_TIMEOUT:-60}   # seconds

# psql against the cluster as the superuser: no psqlrc, stop on first error, quiet.
# Usage: pg_sql [psql args...]   (database: $PG_DB or postgres)
pg_sql() {
  PGCONNECT_TIMEOUT=5 PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 \
    -h "$PG_HOST" -p "$PG_PORT" -U "$PG_SUPERUSER" -d "${PG_DB:-postgres}" "$@"
}
pg_value() { pg_sql -Atc "$1"; }

pg_ready() { pg_isready -q -h "$PG_HOST" -p "$PG_PORT" -t 2; }

pg_wait_ready() {
  local deadline=$((SECONDS + PG_READY_TIMEOUT))
  until pg_ready; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      warn "postgres not ready after ${PG_READY_TIMEOUT}s; end of the server log:"
      tail -n 30 "/var/log/postgresql/postgresql-${PG_VERSION}-${PG_CLUSTER}.log" >&2 || true
      die "postgres ${PG_VERSION}/${PG_CLUSTER} is not accepting connections on ${PG_HOST}:${PG_PORT}"
    fi
    sleep 0.5
  done
}

pg_ctl_cluster() {
  as_root pg_ctlcluster --skip-systemctl-redirect "$PG_VERSION" "$PG_CLUSTER" "$@"
}

# Start the cluster if it is not accepting connections, then wait (bounded) until it is.
pg_ensure_running() {
  if pg_ready; then
    note "postgres ${PG_VERSION}/${PG_CLUSTER} is accepting connections on ${PG_HOST}:${PG_PORT}"
    return 0
  fi
  note "postgres is not ready; starting cluster ${PG_VERSION}/${PG_CLUSTER}"
  # "already running" (e.g. still in recovery) is not an error here: the wait below decides.
  pg_ctl_cluster start || warn "pg_ctlcluster start exited $?; waiting anyway"
  pg_wait_ready
  note "postgres is up"
}

# Logical decoding (CDC) needs wal_level=logical plus replication slots and WAL senders.
# Restarts the cluster only when a setting had to change.
pg_ensure_logical_replication() {
  local changed=0 current setting
  current=$(pg_value 'show wal_level')
  if [ "$current" != logical ]; then
    note "wal_level is '$current'; setting it to 'logical'"
    pg_sql -c 'ALTER SYSTEM SET wal_level = logical'
    changed=1
  else
    note "wal_level is already 'logical'"
  fi
  for setting in max_replication_slots max_wal_senders; do
    current=$(pg_value "show $setting")
    if [ "$current" -lt 10 ]; then
      note "$setting is $current; raising it to 10"
      pg_sql -c "ALTER SYSTEM SET $setting = 10"
      changed=1
    fi
  done
  if [ "$changed" -eq 1 ]; then
    note "restarting cluster ${PG_VERSION}/${PG_CLUSTER} to apply"
    pg_ctl_cluster restart
    pg_wait_ready
    current=$(pg_value 'show wal_level')
    [ "$current" = logical ] || die "wal_level is still '$current' after the restart"
    note "wal_level is now 'logical'"
  fi
}
