"""The chaos run (`manage.py chaos`, issues #18 and #27): Granary's real processes on servers of
the run's own, under kills, restarts, faulty drives, an S3 server that fails and damaged bytes,
judged from outside.

services: its PostgreSQL and RabbitMQ; s3: its S3 server, the object-store faults and the reasons
the archive recorded while they lasted; fleet: gunicorn, a worker per queue, beat; provider and
orders: the provider's and the user's side over HTTP (client); faults: what the run does to the
tape archive; watch: duplicated work, quiet, stuck; verify: bytes read back from the volumes and
the S3 server's folder, and the archive's reconciliation; run: the phases; report: the verdict;
main: the command's two halves.
"""
