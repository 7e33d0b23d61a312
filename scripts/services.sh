#!/usr/bin/env bash
# Makes sure the local PostgreSQL and RabbitMQ are running (starts them if they are down).
set -euo pipefail

pg_up() { pg_isready -q -h localhost -p 5432 2>/dev/null; }
if ! pg_up; then
  echo "Starting PostgreSQL ..."
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
  for _ in $(seq 60); do pg_up && break; sleep 1; done
  pg_up || { echo "PostgreSQL did not come up" >&2; exit 1; }
fi

mq_up() { rabbitmqctl -q status >/dev/null 2>&1; }
if ! mq_up; then
  echo "Starting RabbitMQ ..."
  rabbitmq-server -detached
  for _ in $(seq 90); do mq_up && break; sleep 1; done
  mq_up || { echo "RabbitMQ did not come up" >&2; exit 1; }
fi
rabbitmqctl -q await_startup >/dev/null 2>&1 || true

# The database the README's commands use when DATABASE_URL points here.
if ! psql -h localhost -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='granary'" \
    | grep -q 1; then
  psql -h localhost -U postgres -qc "CREATE DATABASE granary"
  echo "Created the PostgreSQL database granary."
fi
echo "PostgreSQL and RabbitMQ are up."
