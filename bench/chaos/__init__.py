"""The chaos run (`manage.py chaos`, issue #18): Granary's real processes on servers of the
run's own, under kills, restarts, faulty drives and damaged bytes, judged from outside.

services: its PostgreSQL and RabbitMQ; fleet: gunicorn, a worker per queue, beat; provider and
orders: the provider's and the user's side over HTTP (client); faults: what the run does to the
archive; watch: duplicated work, quiet, stuck; verify: bytes read back from the volumes and the
archive's reconciliation; run: the phases; report: the verdict; main: the command's two halves.
"""
