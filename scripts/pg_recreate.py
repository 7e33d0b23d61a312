"""Drop and create the PostgreSQL database named in a URL (for throw-away e2e databases); with
--keep, create it only if it is missing (a benchmark reusing what it loaded)."""
import sys

import psycopg
from psycopg import sql


def main(url, keep=False):
    name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    with psycopg.connect(url, dbname="postgres", autocommit=True) as conn:
        ident = sql.Identifier(name)
        if keep:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))
            return
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))


if __name__ == "__main__":
    main(sys.argv[1], keep="--keep" in sys.argv[2:])
