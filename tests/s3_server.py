"""A real S3 server for the tests (`rclone serve s3` on 127.0.0.1): the class lives in
bench/s3server.py, since the object-store benchmark starts one too; its names are kept here for
the tests that import them."""
from bench.s3server import ACCESS_KEY, SECRET_KEY, S3Server, client_config, rclone_binary

__all__ = ["ACCESS_KEY", "SECRET_KEY", "S3Server", "client_config", "rclone_binary"]
