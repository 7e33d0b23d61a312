"""Several hosts, shown (`manage.py cluster`, `make cluster`): Granary's processes in network
namespaces of their own, on PostgreSQL and RabbitMQ reached over the links and an object store
(an S3 server) on a host of its own, with one silo's storage manager host and then the object
store's host taken down and brought back."""
