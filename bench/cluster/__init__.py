"""Several hosts, shown (`manage.py cluster`, `make cluster`): Granary's processes in network
namespaces of their own, on PostgreSQL and RabbitMQ reached over the links, with one silo's
storage manager host taken down and brought back."""
