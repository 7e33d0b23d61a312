"""Drop and create the PostgreSQL database named in a URL (for throw-away e2e databases)."""
import sys

import psycopg
from psycopg import sql


def main(url):
    name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    with psycopg.connect(url, dbname="postgres", autocommit=True) as conn:
        ident = sql.Identifier(name)
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))


if __name__ == "__main__":
    main(sys.argv[1])
