# Granary: `make run` sets up and starts the demo; `make test` runs every test.
.PHONY: run setup test lint

run: setup
	scripts/run.sh

setup:
	scripts/setup.sh

test:
	scripts/test.sh

lint:
	.venv/bin/ruff check .

